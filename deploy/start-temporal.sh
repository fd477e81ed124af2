#!/bin/sh
# Starts the Temporal server (all four services in one process) with turnpike's config,
# deploy/temporal-server/turnpike.yaml, which reads its settings from the environment.
#
# Run by both setups, so what the cluster test exercises is what a team runs:
#   docker-compose.yml   service `temporal` (temporalio/server image, ./deploy mounted at /deploy)
#   npm run cluster      scripts/temporal-cluster.ts, with temporal-server built from the Go
#                        module proxy on PATH and TURNPIKE_SERVER_CONFIG_DIR pointing into the clone
# It replaces the image's own entrypoint, which renders the image's built-in config template
# instead of this file.
set -eu

CONFIG_DIR="${TURNPIKE_SERVER_CONFIG_DIR:-/deploy/temporal-server}"

# A server that listens on every interface (BIND_ON_IP=0.0.0.0, as in a container) must tell
# its own services which address reaches it; the server refuses to start otherwise. The
# container's first address is that address (the image's own entrypoint does the same).
if [ "${BIND_ON_IP:-127.0.0.1}" = "0.0.0.0" ] && [ -z "${TEMPORAL_BROADCAST_ADDRESS:-}" ]; then
  TEMPORAL_BROADCAST_ADDRESS=$(hostname -i | awk '{ print $1 }')
  export TEMPORAL_BROADCAST_ADDRESS
fi

# --root / because the server joins root and config dir, and CONFIG_DIR is absolute.
# --env turnpike selects turnpike.yaml in it. --allow-no-auth says out loud that this frontend
# has no authorizer: keep its port on a private network (loopback here, the compose network there).
exec temporal-server --root / --config "$CONFIG_DIR" --env turnpike --allow-no-auth start
