import SQLite from 'better-sqlite3';
import pg from 'pg';

/**
 * Unique constraints a write broke, as a client should hear of them. Two requests that
 * both check "is this name free?" and then insert (four concurrent user creations with one
 * email) end with SQLite refusing all but the first: that refusal is a 409 `conflict`,
 * never a 500. platform/http/errors.ts maps it, once, for every repository.
 */

/** A UNIQUE or PRIMARY KEY constraint SQLite refused a write for. */
export interface UniqueViolation {
  /** The table, when SQLite names columns (`users.email`); null for an index on expressions. */
  table: string | null;
  /** The columns as SQLite names them; empty for an index on expressions. */
  columns: string[];
  /** The index, when SQLite names it instead of columns (an index on expressions). */
  index: string | null;
}

const UNIQUE_CODES = new Set(['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY']);

/**
 * The unique constraint behind `err` (better-sqlite3's SqliteError with code
 * SQLITE_CONSTRAINT_UNIQUE or _PRIMARYKEY; its `cause` too), or null. SQLite says
 * `UNIQUE constraint failed: users.email`, `...: a.b, a.c` or `...: index 'name'`.
 */
export function uniqueViolationOf(err: unknown): UniqueViolation | null {
  const candidates = [err, (err as { cause?: unknown } | null)?.cause];
  for (const e of candidates) {
    if (e instanceof pg.DatabaseError && e.code === '23505') return postgresViolation(e);
    if (!(e instanceof SQLite.SqliteError) || !UNIQUE_CODES.has(e.code)) continue;
    const what = /constraint failed: (.+)$/.exec(e.message)?.[1]?.trim() ?? '';
    const index = /^index '(.+)'$/.exec(what)?.[1];
    if (index) return { table: null, columns: [], index };
    const parts = what
      .split(/\s*,\s*/)
      .map((p) => p.split('.'))
      .filter((p) => p.length === 2);
    return { table: parts[0]?.[0] ?? null, columns: parts.map((p) => p[1]!), index: null };
  }
  return null;
}

/**
 * PostgreSQL's unique_violation, named as SQLite names it (so UNIQUE_MEANINGS serves both):
 * its detail says `Key (email)=(...)` or `Key (a, b)=(...)`; an index on expressions
 * (`Key (COALESCE(parent_id, ''::text), name)=...`) is named by the index, as SQLite does.
 */
function postgresViolation(e: pg.DatabaseError): UniqueViolation {
  const inside = /^Key \((.*)\)=\(/.exec(e.detail ?? '')?.[1] ?? '';
  const columns = inside.split(/\s*,\s*/);
  if (e.table && columns.length > 0 && columns.every((c) => /^[a-z_][a-z0-9_]*$/.test(c))) return { table: e.table, columns, index: null };
  return { table: null, columns: [], index: e.constraint ?? null };
}

/** The constraint's key in UNIQUE_MEANINGS: `table.column, table.column` or the index's name. */
export function constraintKey(v: UniqueViolation): string {
  return v.index ?? v.columns.map((c) => `${v.table}.${c}`).join(', ');
}

/**
 * What the schema's unique constraints mean to a client: the request fields (as the API
 * names them) and a sentence, keyed as SQLite names the constraint (`table.column, ...`,
 * or the index's name for an index on expressions, which must be here: SQLite names no
 * column for it); other constraints fall back to their column names
 * (test/conflicts.test.ts checks both against the migrated schema).
 */
export const UNIQUE_MEANINGS: Readonly<Record<string, { fields: readonly string[]; message: string }>> = {
  'users.email': { fields: ['email'], message: 'A user with this email already exists' },
  content_folders_name: { fields: ['name'], message: 'A folder with this name already exists there' },
  'content_collections.name': { fields: ['name'], message: 'A collection with this name already exists' },
  'content_tags.name': { fields: ['name'], message: 'A tag with this name already exists' },
  'passkeys.credential_id': { fields: ['response'], message: 'This passkey is already registered' },
  'layout_revisions.layout_id, layout_revisions.number': {
    fields: [],
    message: 'Another publish of this layout was saved at the same moment; reload and try again',
  },
};

const camel = (s: string) => s.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** The fields and message of a 409 for `v`: its UNIQUE_MEANINGS entry, or one from its column names. */
export function describeUniqueViolation(v: UniqueViolation): { fields: string[]; message: string } {
  const known = UNIQUE_MEANINGS[constraintKey(v)];
  if (known) return { fields: [...known.fields], message: known.message };
  const fields = v.columns.map(camel);
  if (fields.length === 0) return { fields, message: 'This already exists: a name or key that must be unique is taken' };
  return { fields, message: `This already exists: another one has the same ${fields.join(' and ')}` };
}
