#!/bin/sh
# One-shot setup of namespace `default` for turnpike, run by the `search-attributes` service
# (temporalio/admin-tools image) once the Temporal server answers health checks:
#   1. create the namespace if it is missing (the server image does not create one);
#   2. register turnpike's search attributes (workflows/context/search-attributes.ts):
#        AgentTurnStatus Keyword, AgentPendingTools KeywordList, AgentConversationId Keyword,
#        TurnpikeParentTurnId Keyword, TurnpikeForkOf Keyword, TurnpikeTenant Keyword,
#        TurnpikeApprovers KeywordList, TurnpikeNextExpiry Datetime;
#   3. wait until a visibility query over all eight is accepted, so the worker (which
#      depends on this job completing successfully) never starts against a namespace
#      that would reject its search-attribute upserts.
# Idempotent: re-running it on every `docker compose up` changes nothing once done.
set -eu

NAMESPACE="${TEMPORAL_NAMESPACE:-default}"
# How long closed turns stay listable; open (parked) turns are kept regardless.
RETENTION="${TURNPIKE_NAMESPACE_RETENTION:-168h}"
ATTEMPTS="${SETUP_ATTEMPTS:-60}"
SLEEP_SECONDS="${SETUP_SLEEP_SECONDS:-2}"
# Past the namespace cache's refresh interval (2 s by default), after creating any attribute.
NAMESPACE_REFRESH_SECONDS="${SETUP_NAMESPACE_REFRESH_SECONDS:-3}"
CREATED=
# Exit status a step uses for "retrying cannot fix this".
FATAL=100

log() { echo "search-attributes: $*"; }

# Every CLI call gets a deadline so a half-started server cannot hang the job.
cli() { timeout 30 temporal "$@"; }

# retry WHAT COMMAND...: runs COMMAND until it succeeds, at most $ATTEMPTS times.
retry() {
  what=$1
  shift
  attempt=1
  while :; do
    status=0
    "$@" || status=$?
    [ "$status" -eq 0 ] && return 0
    if [ "$status" -eq "$FATAL" ]; then
      log "failed: $what"
      return 1
    fi
    if [ "$attempt" -ge "$ATTEMPTS" ]; then
      log "gave up: $what (after $attempt attempts)"
      return 1
    fi
    log "not yet: $what (attempt $attempt/$ATTEMPTS)"
    attempt=$((attempt + 1))
    sleep "$SLEEP_SECONDS"
  done
}

ensure_namespace() {
  if cli operator namespace describe --namespace "$NAMESPACE" >/dev/null 2>&1; then
    log "namespace $NAMESPACE exists"
    return 0
  fi
  if out=$(cli operator namespace create --namespace "$NAMESPACE" --retention "$RETENTION" 2>&1); then
    log "namespace $NAMESPACE created (retention $RETENTION)"
    return 0
  fi
  case "$out" in
    *"already"*) log "namespace $NAMESPACE exists"; return 0 ;;
  esac
  echo "$out" >&2
  return 1
}

# create_search_attribute NAME TYPE
create_search_attribute() {
  if out=$(cli operator search-attribute create --namespace "$NAMESPACE" --name "$1" --type "$2" 2>&1); then
    log "$1 ($2) registered"
    CREATED=yes
    return 0
  fi
  case "$out" in
    # The CLI says "already exists and has different type" when a name is taken by another
    # type. Retrying cannot fix that, and "tolerating" it would leave turnpike's upserts
    # failing, so stop here. (Removing it: temporal operator search-attribute remove.)
    *"different type"*)
      echo "$out" >&2
      return "$FATAL"
      ;;
    *"already exists"*)
      log "$1 ($2) already registered"
      return 0
      ;;
  esac
  echo "$out" >&2
  return 1
}

query_accepted() {
  cli workflow list --namespace "$NAMESPACE" --limit 1 \
    --query 'AgentTurnStatus="x" OR AgentPendingTools="x" OR AgentConversationId="x" OR TurnpikeParentTurnId="x" OR TurnpikeForkOf="x" OR TurnpikeTenant="x" OR TurnpikeApprovers="x" OR TurnpikeNextExpiry="2000-01-01T00:00:00Z"' >/dev/null
}

log "Temporal at ${TEMPORAL_ADDRESS:-?}, namespace $NAMESPACE"
retry "cluster health" cli operator cluster health
retry "namespace $NAMESPACE" ensure_namespace
retry "AgentTurnStatus" create_search_attribute AgentTurnStatus Keyword
retry "AgentPendingTools" create_search_attribute AgentPendingTools KeywordList
retry "AgentConversationId" create_search_attribute AgentConversationId Keyword
retry "TurnpikeParentTurnId" create_search_attribute TurnpikeParentTurnId Keyword
retry "TurnpikeForkOf" create_search_attribute TurnpikeForkOf Keyword
retry "TurnpikeTenant" create_search_attribute TurnpikeTenant Keyword
retry "TurnpikeApprovers" create_search_attribute TurnpikeApprovers KeywordList
retry "TurnpikeNextExpiry" create_search_attribute TurnpikeNextExpiry Datetime
retry "visibility queries on turnpike's search attributes" query_accepted
# The frontend accepted the query; the other services read a new search attribute from the
# namespace's config, which each re-reads every 2 s (system.namespaceCacheRefreshInterval).
if [ -n "$CREATED" ]; then sleep "$NAMESPACE_REFRESH_SECONDS"; fi
cli operator search-attribute list --namespace "$NAMESPACE"
log "done"
