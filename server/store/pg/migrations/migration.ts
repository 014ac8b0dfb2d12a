/** One numbered step of the PostgreSQL schema: SQL run in one transaction, recorded in schema_migrations. */
export interface PgMigration {
  version: number;
  name: string;
  sql: string;
}
