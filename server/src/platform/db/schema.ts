/**
 * Kysely's view of the database. Each migration that adds or changes a table updates
 * the matching interface here. Times are stored as ISO-8601 UTC text with milliseconds.
 */
export interface SchemaMigrationsTable {
  version: number;
  name: string;
  applied_at: string;
}

/** Small key/value facts about this installation (instance id, ...). */
export interface MetaTable {
  key: string;
  value: string;
}

export interface Database {
  schema_migrations: SchemaMigrationsTable;
  meta: MetaTable;
}
