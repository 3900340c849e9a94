import type { Kysely } from 'kysely';

export interface Migration {
  /** Strictly increasing, never reused; the database records the versions it has. */
  version: number;
  name: string;
  /** Runs inside a transaction. Forward-only: there is no down. */
  up(db: Kysely<any>): Promise<void>;
}
