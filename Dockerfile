# The turnpike worker image, built by `docker compose build worker` (service `worker` in
# docker-compose.yml) or `docker build -t turnpike-worker .`.
#
# node:20-bookworm-slim: Node 20 satisfies package.json's engines (>=20.19) and the 20 tag
# follows its patch releases; Debian bookworm is glibc, which @temporalio/core-bridge's
# prebuilt native library needs (it ships linux-gnu builds for x64 and arm64, none for
# musl/Alpine); -slim keeps the image small. For byte-for-byte rebuilds, add the digest
# (node:20-bookworm-slim@sha256:...) that `docker buildx imagetools inspect` reports.
#
# Two stages. `build` installs everything, runs the package's build (`npm run build`: dist/)
# and compiles the demo worker beside it (tsconfig.demo.json: dist/demo/worker.js, the entry
# that `npm run worker` runs from source with tsx). The final stage holds Node, the production
# dependencies and dist/: no TypeScript, tsx, test or lint tooling, no sources.

FROM node:20-bookworm-slim AS build

WORKDIR /app

# Dependencies first, so this layer is rebuilt only when the manifests change. `npm install`,
# not `npm ci`: npm 11 leaves other platforms' optional @swc/core binaries out of the lockfile
# and `npm ci` then refuses it as out of sync; `npm install` installs the same locked versions.
COPY package.json package-lock.json ./
RUN npm install --no-audit --no-fund

# The source; .dockerignore keeps node_modules, dist, tests, benchmarks, docs, .git and any
# .env file (API keys) out of the build context.
COPY . .
RUN npm run build \
  && npx tsc -p tsconfig.demo.json \
  && node scripts/worker-image-manifest.mjs image-package.json

FROM node:20-bookworm-slim

WORKDIR /app
ENV NODE_ENV=production

# The image's manifest (scripts/worker-image-manifest.mjs): the repository's dependencies plus
# what turnpike takes as peers and the worker needs at run time, the Temporal SDK, zod and both
# provider SDKs, at the versions the repository pins. With the repository's lockfile,
# `--omit=dev` installs those at their locked versions and nothing else. The worker still
# bundles its workflow code when it starts: webpack and swc come with @temporalio/worker.
COPY --from=build /app/image-package.json ./package.json
COPY package-lock.json ./
RUN npm install --omit=dev --no-audit --no-fund && npm cache clean --force

COPY --from=build /app/dist ./dist

# The content store's folder (TURNPIKE_CONTENT_STORE in docker-compose.yml), owned by the
# unprivileged user: a named volume mounted there starts with this ownership.
RUN mkdir -p /srv/turnpike/content && chown node:node /srv/turnpike/content

# Run unprivileged. The worker writes nothing under /app.
USER node

# Temporal connection and provider keys come from the environment (docker-compose.yml):
# TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, OPENAI_API_KEY, ANTHROPIC_API_KEY, *_BASE_URL.
# node itself, not npm: SIGTERM reaches the worker, which then shuts down gracefully.
CMD ["node", "dist/demo/worker.js"]
