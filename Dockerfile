# The turnpike worker image, built by `docker compose build worker` (service `worker` in
# docker-compose.yml) or `docker build -t turnpike-worker .`.
#
# node:20-bookworm-slim: Node 20 satisfies package.json's engines (>=20.19) and the 20 tag
# follows its patch releases; Debian bookworm is glibc, which @temporalio/core-bridge's
# prebuilt native library needs (it ships linux-gnu builds for x64 and arm64, none for
# musl/Alpine); -slim keeps the image small. For byte-for-byte rebuilds, add the digest
# (node:20-bookworm-slim@sha256:...) that `docker buildx imagetools inspect` reports.
FROM node:20-bookworm-slim

WORKDIR /app

# Dependencies first, so this layer is rebuilt only when the manifests change.
# A full install on purpose (no --omit=dev, and NODE_ENV is not set to production):
# `npm run worker` runs TypeScript with tsx, which is a devDependency, and the worker
# bundles the workflow code with webpack at startup. `npm install`, not `npm ci`: npm 11
# leaves other platforms' optional @swc/core binaries out of the lockfile and `npm ci` then
# refuses it as out of sync; `npm install` installs the same locked versions.
COPY package.json package-lock.json ./
RUN npm install --no-audit --no-fund && npm cache clean --force

# The source; .dockerignore keeps node_modules, .git, .turnpike, bench/results and any
# .env file (API keys) out of the build context.
COPY . .

# Run unprivileged. The worker writes nothing under /app (tsx caches in /tmp).
USER node

# Temporal connection and provider keys come from the environment (docker-compose.yml):
# TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, OPENAI_API_KEY, ANTHROPIC_API_KEY, *_BASE_URL.
CMD ["npm", "run", "worker"]
