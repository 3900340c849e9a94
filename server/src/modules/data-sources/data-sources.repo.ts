import { createHash } from 'node:crypto';
import type { Db } from '../../platform/db/database.js';
import { newId, nowIso } from '../../platform/db/ids.js';
import type { DataSourceAccessLevel, DataSourceFetchStateTable, DataSourcesTable } from '../../platform/db/schema.js';
import { notFound } from '../../platform/http/errors.js';
import { afterCursor, toPage } from '../../platform/http/pagination.js';
import type { Column, Dataset, FetchAttempt, Row } from './providers/types.js';

/** Queries of the data-sources tables (plain functions of `db` or a transaction). */

export type SourceRow = DataSourcesTable;
export type FetchStateRow = DataSourceFetchStateTable;

/** Fetch attempts kept per source for diagnostics; older ones are pruned as new ones come. */
export const ATTEMPTS_KEPT = 20;

export function parseJson<T>(text: string | null | undefined, fallback: T): T {
  if (text == null) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

export async function findSourceRow(db: Db, id: string): Promise<SourceRow | undefined> {
  return db.selectFrom('data_sources').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The provider of each of `ids` that names a source (absent ids name nothing). */
export async function providersOf(db: Db, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('data_sources')
    .select(['id', 'provider'])
    .where('id', 'in', [...ids])
    .execute();
  return new Map(rows.map((r) => [r.id, r.provider]));
}

export async function existingSources(db: Db, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  return new Set(
    (
      await db
        .selectFrom('data_sources')
        .select('id')
        .where('id', 'in', [...ids])
        .execute()
    ).map((r) => r.id),
  );
}

/** A source's edit revision (undefined: it is gone). */
export async function sourceRevision(db: Db, id: string): Promise<number | undefined> {
  return (await db.selectFrom('data_sources').select('revision').where('id', '=', id).executeTakeFirst())?.revision;
}

export async function getSourceRow(db: Db, id: string): Promise<SourceRow> {
  const row = await findSourceRow(db, id);
  if (!row) throw notFound('Data source');
  return row;
}

export async function listSourceRows(db: Db, query: { limit: number; cursor?: string; q?: string; provider?: string }) {
  let q = db
    .selectFrom('data_sources')
    .selectAll()
    .where(afterCursor('name', 'id', 'asc', query.cursor));
  if (query.q) q = q.where((eb) => eb(eb.fn('instr', [eb.fn('lower', ['name']), eb.val(query.q!.toLowerCase())]), '>', 0));
  if (query.provider) q = q.where('provider', '=', query.provider);
  const rows = await q
    .orderBy('name')
    .orderBy('id')
    .limit(query.limit + 1)
    .execute();
  return toPage(rows, query.limit, (r) => r.name);
}

export async function insertSource(db: Db, row: SourceRow): Promise<void> {
  await db.insertInto('data_sources').values(row).execute();
}

/** Applies `set` and bumps the revision, only if the row is still at `revision` (answers whether it was). */
export async function updateSource(db: Db, id: string, revision: number, set: Partial<Omit<SourceRow, 'id' | 'revision'>>): Promise<boolean> {
  const res = await db
    .updateTable('data_sources')
    .set({ ...set, revision: revision + 1 })
    .where('id', '=', id)
    .where('revision', '=', revision)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

export async function deleteSource(db: Db, id: string): Promise<void> {
  await db.deleteFrom('data_sources').where('id', '=', id).execute();
}

// ---- fetch state ----

export async function fetchStatesOf(db: Db, ids: readonly string[]): Promise<Map<string, FetchStateRow>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('data_source_fetch_state')
    .selectAll()
    .where('source_id', 'in', [...ids])
    .execute();
  return new Map(rows.map((r) => [r.source_id, r]));
}

export async function fetchStateOf(db: Db, id: string): Promise<FetchStateRow | undefined> {
  return (await fetchStatesOf(db, [id])).get(id);
}

export async function upsertFetchState(db: Db, sourceId: string, set: Partial<Omit<FetchStateRow, 'source_id'>>): Promise<void> {
  await db
    .insertInto('data_source_fetch_state')
    .values({ source_id: sourceId, consecutive_failures: 0, ...set })
    .onConflict((oc) => oc.column('source_id').doUpdateSet(set))
    .execute();
}

/** Sources whose next fetch is due at `now`, soonest first. */
export async function dueSourceIds(db: Db, now: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('data_source_fetch_state')
    .select('source_id')
    .where('next_fetch_at', 'is not', null)
    .where('next_fetch_at', '<=', now)
    .orderBy('next_fetch_at')
    .limit(limit)
    .execute();
  return rows.map((r) => r.source_id);
}

// ---- snapshots ----

export interface SnapshotMeta {
  revision: number;
  sha256: string;
  columns: Column[];
  rowCount: number;
  sizeBytes: number;
  warnings: string[];
  fetchedAt: string;
}

export interface Snapshot extends SnapshotMeta {
  sourceId: string;
  rows: Row[];
}

export async function snapshotMetasOf(db: Db, ids: readonly string[]): Promise<Map<string, SnapshotMeta>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('data_source_snapshots')
    .select(['source_id', 'revision', 'sha256', 'columns', 'row_count', 'size_bytes', 'warnings', 'fetched_at'])
    .where('source_id', 'in', [...ids])
    .execute();
  return new Map(
    rows.map((r) => [
      r.source_id,
      {
        revision: r.revision,
        sha256: r.sha256,
        columns: parseJson<Column[]>(r.columns, []),
        rowCount: r.row_count,
        sizeBytes: r.size_bytes,
        warnings: parseJson<string[]>(r.warnings, []),
        fetchedAt: r.fetched_at,
      },
    ]),
  );
}

/** The current snapshot of a source with its rows, or null before its first data. */
export async function snapshotOf(db: Db, sourceId: string): Promise<Snapshot | null> {
  const r = await db.selectFrom('data_source_snapshots').selectAll().where('source_id', '=', sourceId).executeTakeFirst();
  if (!r) return null;
  return {
    sourceId,
    revision: r.revision,
    sha256: r.sha256,
    columns: parseJson<Column[]>(r.columns, []),
    rows: parseJson<Row[]>(r.rows, []),
    rowCount: r.row_count,
    sizeBytes: r.size_bytes,
    warnings: parseJson<string[]>(r.warnings, []),
    fetchedAt: r.fetched_at,
  };
}

/** The snapshot's content hash: sha256 of the canonical JSON of {columns, rows}. */
export function datasetSha256(columns: readonly Column[], rows: readonly Row[]): { sha256: string; columnsJson: string; rowsJson: string } {
  const columnsJson = JSON.stringify(columns.map((c) => ({ name: c.name, type: c.type })));
  const rowsJson = JSON.stringify(rows.map((r) => Object.fromEntries(columns.map((c) => [c.name, r[c.name] ?? null]))));
  const sha256 = createHash('sha256').update(`{"columns":${columnsJson},"rows":${rowsJson}}`).digest('hex');
  return { sha256, columnsJson, rowsJson };
}

/**
 * Stores a dataset as the source's snapshot. Identical data (same sha256) changes nothing
 * (no new revision); else the revision goes up by one. Also keeps data_sources.columns in
 * step (without bumping the source's own revision: a refresh is not an edit).
 */
export async function writeSnapshot(db: Db, sourceId: string, dataset: Pick<Dataset, 'columns' | 'rows' | 'warnings'>, at: string) {
  const { sha256, columnsJson, rowsJson } = datasetSha256(dataset.columns, dataset.rows);
  const current = await db.selectFrom('data_source_snapshots').select(['revision', 'sha256']).where('source_id', '=', sourceId).executeTakeFirst();
  const warnings = JSON.stringify(dataset.warnings.slice(0, 50));
  if (current?.sha256 === sha256) {
    await db.updateTable('data_source_snapshots').set({ warnings }).where('source_id', '=', sourceId).execute();
    return { changed: false, revision: current.revision };
  }
  const revision = (current?.revision ?? 0) + 1;
  const values = {
    revision,
    sha256,
    columns: columnsJson,
    rows: rowsJson,
    row_count: dataset.rows.length,
    size_bytes: Buffer.byteLength(rowsJson),
    warnings,
    fetched_at: at,
  };
  await db
    .insertInto('data_source_snapshots')
    .values({ source_id: sourceId, ...values })
    .onConflict((oc) => oc.column('source_id').doUpdateSet(values))
    .execute();
  await db.updateTable('data_sources').set({ columns: columnsJson }).where('id', '=', sourceId).execute();
  return { changed: true, revision };
}

/** A copy of one source's snapshot for another (duplicate): revision 1 of the copy. */
export async function copySnapshot(db: Db, from: string, to: string): Promise<void> {
  const s = await db.selectFrom('data_source_snapshots').selectAll().where('source_id', '=', from).executeTakeFirst();
  if (s)
    await db
      .insertInto('data_source_snapshots')
      .values({ ...s, source_id: to, revision: 1 })
      .execute();
}

// ---- attempts ----

export type AttemptOutcome = 'data' | 'unchanged' | 'failed';

export async function insertAttempt(db: Db, sourceId: string, attempt: FetchAttempt, outcome: AttemptOutcome): Promise<void> {
  await db
    .insertInto('data_source_attempts')
    .values({
      id: newId(),
      source_id: sourceId,
      at: attempt.at,
      url: attempt.url.slice(0, 2000),
      outcome,
      status: attempt.status,
      bytes: attempt.bytes,
      latency_ms: Math.max(0, Math.round(attempt.latencyMs)),
      error: attempt.error?.slice(0, 2000) ?? null,
      error_code: attempt.errorCode,
    })
    .execute();
  // Bounded: the newest ATTEMPTS_KEPT stay.
  await db
    .deleteFrom('data_source_attempts')
    .where('source_id', '=', sourceId)
    .where('id', 'not in', (eb) =>
      eb.selectFrom('data_source_attempts').select('id').where('source_id', '=', sourceId).orderBy('id', 'desc').limit(ATTEMPTS_KEPT),
    )
    .execute();
}

export async function attemptsOf(db: Db, sourceId: string) {
  const rows = await db.selectFrom('data_source_attempts').selectAll().where('source_id', '=', sourceId).orderBy('id', 'desc').limit(ATTEMPTS_KEPT).execute();
  return rows.map((r) => ({
    at: r.at,
    url: r.url,
    outcome: r.outcome,
    status: r.status,
    bytes: r.bytes,
    latencyMs: r.latency_ms,
    error: r.error,
    errorCode: r.error_code,
  }));
}

// ---- grants ----

export async function grantOf(db: Db, sourceId: string, userId: string) {
  return db.selectFrom('data_source_grants').selectAll().where('source_id', '=', sourceId).where('user_id', '=', userId).executeTakeFirst();
}

/** A user's grants on any of the sources. */
export function grantsOfUser(db: Db, userId: string, sourceIds: readonly string[]) {
  return db
    .selectFrom('data_source_grants')
    .select(['source_id', 'level'])
    .where('user_id', '=', userId)
    .where('source_id', 'in', [...sourceIds])
    .execute();
}

export async function listGrants(db: Db, sourceId: string, page: { limit: number; cursor?: string }) {
  const rows = await db
    .selectFrom('data_source_grants')
    .innerJoin('users', 'users.id', 'data_source_grants.user_id')
    .select([
      'users.id as id',
      'users.display_name as display_name',
      'users.role as role',
      'data_source_grants.level as level',
      'data_source_grants.granted_by as granted_by',
      'data_source_grants.updated_at as updated_at',
    ])
    .where('data_source_grants.source_id', '=', sourceId)
    .where(afterCursor('users.display_name', 'users.id', 'asc', page.cursor))
    .orderBy('users.display_name')
    .orderBy('users.id')
    .limit(page.limit + 1)
    .execute();
  return toPage(rows, page.limit, (r) => r.display_name);
}

export async function setGrant(db: Db, sourceId: string, userId: string, level: DataSourceAccessLevel, grantedBy: string | null): Promise<void> {
  const at = nowIso();
  await db
    .insertInto('data_source_grants')
    .values({ source_id: sourceId, user_id: userId, level, granted_by: grantedBy, created_at: at, updated_at: at })
    .onConflict((oc) => oc.columns(['source_id', 'user_id']).doUpdateSet({ level, granted_by: grantedBy, updated_at: at }))
    .execute();
}

export async function clearGrant(db: Db, sourceId: string, userId: string): Promise<void> {
  await db.deleteFrom('data_source_grants').where('source_id', '=', sourceId).where('user_id', '=', userId).execute();
}

// ---- manual-table rows ----

/**
 * The live rows of a table (records the outputs show: published, inside their window), in
 * order. A multi-choice value (a list) becomes its options joined with ", ", as a cell.
 */
export async function manualRowsOf(db: Db, sourceId: string): Promise<Row[]> {
  const rows = await db
    .selectFrom('data_source_rows')
    .select('values')
    .where('source_id', '=', sourceId)
    .where('live', '=', 1)
    .orderBy('position')
    .orderBy('id')
    .execute();
  return rows.map((r) => {
    const row = parseJson<Record<string, unknown>>(r.values, {});
    for (const [k, v] of Object.entries(row)) if (Array.isArray(v)) row[k] = v.join(', ');
    return row as Row;
  });
}

/** Replaces a table's rows with `rows`, in order. */
export async function replaceManualRows(db: Db, sourceId: string, rows: readonly Row[]): Promise<void> {
  await db.deleteFrom('data_source_rows').where('source_id', '=', sourceId).execute();
  const at = nowIso();
  for (let i = 0; i < rows.length; i += 500) {
    await db
      .insertInto('data_source_rows')
      .values(
        rows.slice(i, i + 500).map((values, j) => ({
          id: newId(),
          source_id: sourceId,
          position: i + j,
          values: JSON.stringify(values),
          state: 'published',
          revision: 1,
          live: 1,
          state_changed_at: at,
          created_at: at,
          updated_at: at,
        })),
      )
      .execute();
  }
}

/** A duplicate's rows: the live records of the original (their values as stored), published and live in the copy. */
export async function copyManualRows(db: Db, from: string, to: string): Promise<void> {
  const rows = await db
    .selectFrom('data_source_rows')
    .select('values')
    .where('source_id', '=', from)
    .where('live', '=', 1)
    .orderBy('position')
    .orderBy('id')
    .execute();
  await replaceManualRows(
    db,
    to,
    rows.map((r) => parseJson<Row>(r.values, {})),
  );
}
