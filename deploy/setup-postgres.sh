#!/bin/sh
# Creates or upgrades Temporal's two PostgreSQL databases. Run by the `temporal-schema`
# service (temporalio/admin-tools image) before every start of the Temporal server.
#
# Safe to run any number of times, which is what lets the data volume outlive
# `docker compose down`:
#   - `create` leaves an existing database alone (the tool ignores "duplicate_database";
#     "already exists" is tolerated here as well, in case a driver reports it differently);
#   - `setup-schema -v 0.0` only writes the version tables when they are missing;
#   - `update-schema` applies only the versioned migrations newer than the database, so
#     moving the admin-tools/server pin forward upgrades the schema in place.
# Same steps as Temporal's own compose setup (temporalio/samples-server,
# compose/scripts/setup-postgres.sh), with the idempotence spelled out.
set -eu

: "${POSTGRES_SEEDS:?POSTGRES_SEEDS must name the PostgreSQL host}"
: "${POSTGRES_USER:?POSTGRES_USER must be set}"
: "${SQL_PASSWORD:?SQL_PASSWORD must be set (temporal-sql-tool reads the password from it)}"
DB_PORT="${DB_PORT:-5432}"
DB="${DB:-postgres12}"
# Where the admin-tools image keeps the schema files; `npm run cluster` points it at the copy
# taken from the go.temporal.io/server module of the same version.
SCHEMA_ROOT="${SCHEMA_ROOT:-/etc/temporal/schema/postgresql/v12}"

sql_tool() {
  temporal-sql-tool --plugin "$DB" --ep "$POSTGRES_SEEDS" -p "$DB_PORT" -u "$POSTGRES_USER" "$@"
}

# setup_database NAME SCHEMA_SUBDIR
setup_database() {
  name=$1
  versioned_dir="$SCHEMA_ROOT/$2/versioned"
  echo "temporal-schema: database $name"
  if ! out=$(sql_tool --db "$name" create 2>&1); then
    case "$out" in
      *"already exists"*) echo "temporal-schema: $name already exists" ;;
      *) echo "$out" >&2; return 1 ;;
    esac
  fi
  sql_tool --db "$name" setup-schema -v 0.0
  sql_tool --db "$name" update-schema -d "$versioned_dir"
}

setup_database "${DBNAME:-temporal}" temporal
setup_database "${VISIBILITY_DBNAME:-temporal_visibility}" visibility
echo "temporal-schema: done"
