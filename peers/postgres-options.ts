/**
 * The options the stores the fleet shares in PostgreSQL have in common (the tenant usage store,
 * the model token counter), and their checks. No type of `pg` here: the stores' published typings
 * reach this file, and an application without `pg` installed must type-check them.
 */

/** An unquoted SQL identifier, optionally qualified by a schema. */
const TABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,55}(\.[A-Za-z_][A-Za-z0-9_]{0,55})?$/;

export interface PostgresPoolOptions {
  /** `postgresql://user:password@host:port/database`, as node-postgres takes it. */
  connectionString: string;
  /** Most connections the pool opens at once. Default 4. */
  maxConnections?: number;
}

/** The options checked, naming `owner` and an `example` table in each error: a TypeError before anything connects. */
export function checkedPostgresOptions(owner: string, options: PostgresPoolOptions & { table?: string }, defaultTable: string): { table: string; quoted: string } {
  if (!options || typeof options.connectionString !== 'string' || options.connectionString.trim() === '') {
    throw new TypeError(`${owner}: connectionString must be a PostgreSQL URL such as postgresql://user:password@host:5432/database`);
  }
  const table = options.table ?? defaultTable;
  if (!TABLE_NAME.test(table)) throw new TypeError(`${owner}: table must be an SQL identifier such as ${defaultTable} or schema.table (got ${JSON.stringify(table)})`);
  const maxConnections = options.maxConnections ?? 4;
  if (!Number.isInteger(maxConnections) || maxConnections < 1) {
    throw new TypeError(`${owner}: maxConnections must be a whole number of at least 1 (got ${String(options.maxConnections)})`);
  }
  return { table, quoted: quotedTable(table) };
}

/** `schema.table` as `"schema"."table"`. */
export function quotedTable(table: string): string {
  return table
    .split('.')
    .map((part) => `"${part}"`)
    .join('.');
}
