import type { Kysely } from 'kysely';

export interface Migration {
  /** Strictly increasing, never reused; the database records the versions it has. */
  version: number;
  name: string;
  /**
   * Runs inside a transaction. Forward-only: there is no down. Written in SQLite's DDL;
   * on PostgreSQL (issue 25) it runs through dialect.ts `translateDdl`. A PostgreSQL
   * database starts empty at the first migration (no PostgreSQL database predates 0500),
   * so the data steps of migrations before 0500 (which use SQLite's functions) are skipped
   * there; a migration from 0500 on moves data on both.
   */
  up(db: Kysely<any>): Promise<void>;
}
