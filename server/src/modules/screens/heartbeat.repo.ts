import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import { dialectOf, isPostgres, sqlText } from '../../platform/db/dialect.js';
import { executeText, prepared } from '../../platform/db/prepared.js';
import { deleteInBatches } from '../../platform/db/batch.js';
import type { NoiseBucketsTable, ScreenHistoryTable } from '../../platform/db/schema.js';
import { pendingCommandCount } from './commands.repo.js';
import { newId, nowIso, type ScreenRow } from './screens.repo.js';

/**
 * The player's contacts: heartbeats and liveness pings (with their group commit's savepoints),
 * noise buckets, the player history they write, and the retention that prunes them. These
 * run on the heartbeat's hot path: one statement each, no await beyond the query's own.
 */

/** The savepoint each group commit job runs in (group-commit.ts). */
export function openJobSavepoint(trx: Db) {
  return executeText(trx, 'savepoint group_commit_job', []);
}

export function releaseJobSavepoint(trx: Db) {
  return executeText(trx, 'release group_commit_job', []);
}

export function rollbackToJobSavepoint(trx: Db) {
  return executeText(trx, 'rollback to group_commit_job', []);
}

const LOCK_SCREEN = 'select 1 from screens where id = ? for no key update';

/**
 * In a row-locked transaction (group commit's `rowLocked`) on PostgreSQL: locks the screen's
 * row until the commit, before anything is read, so heartbeats and pings of one screen take
 * turns and a transaction that changed the row has committed before the reads that follow
 * (each statement of READ COMMITTED sees what was committed when it began). NO KEY: rows that
 * reference the screen (commands, history) may still be inserted meanwhile. On SQLite nothing
 * (its transactions take turns).
 */
export async function lockScreenRow(trx: Db, screenId: string): Promise<void> {
  if (isPostgres(trx)) await executeText(trx, LOCK_SCREEN, [screenId]);
}

/**
 * What a heartbeat compares with: the screen's player fields, status and revision, the display
 * size of its last status, normalised as `WxH` (sides 16..16384, rounded), or null, the
 * policy texts its interval comes from (its own, its groups') and its pending commands' count.
 */
const DISPLAY_SQL = {
  sqlite: sql.raw(`(select case when typeof(w) in ('integer', 'real') and typeof(h) in ('integer', 'real') and w between 16 and 16384 and h between 16 and 16384
    then cast(round(w) as integer) || 'x' || cast(round(h) as integer) end
    from (select json_extract(last_status, '$.display.width') as w, json_extract(last_status, '$.display.height') as h))`),
  // jsonNumber is null for anything but a number; round() of a numeric rounds half away from zero, as SQLite's does.
  postgres: sql.raw(`(select case when w between 16 and 16384 and h between 16 and 16384
    then round(w::numeric)::bigint || 'x' || round(h::numeric)::bigint end
    from (select ${sqlText.jsonNumber('postgres', 'last_status', '$.display.width')} as w, ${sqlText.jsonNumber('postgres', 'last_status', '$.display.height')} as h) d)`),
};

const beforeHeartbeat = prepared((trx: Db, screenId: string, nowText: string) =>
  trx
    .selectFrom('screens')
    // The commands waiting for it (the reply's pendingCommands): none of the heartbeat's writes changes them.
    .select((eb) => pendingCommandCount(eb, nowText).as('pending_commands'))
    .select(['num', 'player_version', 'player_family', 'player_architecture', 'known_status', 'manifest_revision', 'policy'])
    // The policies of the screen's groups, first-sorting first (policies.ts effectivePolicyValue): a JSON array of texts or nulls.
    .select(
      sql<string>`(select ${sql.raw(sqlText.jsonArrayAgg(dialectOf(trx), 'g.policy', 'g.name, g.id'))} from screen_group_members m join screen_groups g on g.id = m.group_id where m.screen_id = screens.id)`.as(
        'group_policies',
      ),
    )
    // The location's zone (null: the default zone setting), for the noise roll-ups' local days.
    .select(sql<string | null>`(select time_zone from locations where locations.id = screens.location_id)`.as('time_zone'))
    .select(sql<string | null>`${DISPLAY_SQL[dialectOf(trx)]}`.as('display'))
    .where('id', '=', screenId),
);

export async function screenBeforeHeartbeat(trx: Db, screenId: string, nowText: string) {
  return (await beforeHeartbeat(trx, screenId, nowText)).rows[0];
}

/** The columns of a bucket row, in the order the insert binds them. */
const BUCKET_COLUMNS = [
  'screen_num',
  'started_ms',
  'average_level',
  'peak_level',
  'monitored_ms',
  'warning_ms',
  'loud_ms',
  'trigger_count',
  'received_ms',
] as const satisfies readonly (keyof NoiseBucketsTable)[];
/** Statement texts by row count (a heartbeat carries at most 120 buckets, so bounded). */
const bucketInsertTexts = new Map<number, string>();

/** The starts already stored for a screen between two starts (a range of the primary key). */
const storedStarts = prepared((trx: Db, screenNum: number, from: number, to: number) =>
  trx.selectFrom('noise_buckets').select('started_ms').where('screen_num', '=', screenNum).where('started_ms', '>=', from).where('started_ms', '<=', to),
);

/**
 * Inserts one screen's buckets from a heartbeat, the first write winning, and answers the
 * rows it inserted. Which those are is read first, in the same transaction (one range
 * read on the primary key, usually empty), so the insert needs no RETURNING: SQLite's
 * RETURNING of 120 rows cost about as much again as the insert itself (issue 24). A
 * bucket stored already, or sent twice in the request, is inserted once (the first one).
 * The text is written once per row count and handed to the driver compiled: kysely
 * building a 1,200-value insert cost more than SQLite inserting it.
 */
export async function insertNoiseBuckets(trx: Db, screenNum: number, rows: readonly NoiseBucketsTable[]): Promise<NoiseBucketsTable[]> {
  if (rows.length === 0) return [];
  let from = rows[0]!.started_ms;
  let to = from;
  for (const r of rows) {
    if (r.screen_num !== screenNum) throw new Error('insertNoiseBuckets: buckets of one screen only');
    if (r.started_ms < from) from = r.started_ms;
    else if (r.started_ms > to) to = r.started_ms;
  }
  const { rows: stored } = await storedStarts(trx, screenNum, from, to);
  let fresh: readonly NoiseBucketsTable[] = rows;
  if (stored.length || hasDuplicates(rows)) {
    const seen = new Set(stored.map((r) => r.started_ms));
    const kept: NoiseBucketsTable[] = [];
    for (const r of rows) {
      if (seen.has(r.started_ms)) continue;
      seen.add(r.started_ms);
      kept.push(r);
    }
    fresh = kept;
  }
  if (fresh.length === 0) return [];
  let text = bucketInsertTexts.get(fresh.length);
  if (!text) {
    const tuple = `(${BUCKET_COLUMNS.map(() => '?').join(', ')})`;
    text = `insert into noise_buckets (${BUCKET_COLUMNS.join(', ')}) values ${Array(fresh.length).fill(tuple).join(', ')} on conflict (screen_num, started_ms) do nothing`;
    bucketInsertTexts.set(fresh.length, text);
  }
  const parameters: unknown[] = new Array(fresh.length * BUCKET_COLUMNS.length);
  let i = 0;
  for (const row of fresh) {
    parameters[i++] = row.screen_num;
    parameters[i++] = row.started_ms;
    parameters[i++] = row.average_level;
    parameters[i++] = row.peak_level;
    parameters[i++] = row.monitored_ms;
    parameters[i++] = row.warning_ms;
    parameters[i++] = row.loud_ms;
    parameters[i++] = row.trigger_count;
    parameters[i++] = row.received_ms;
  }
  const result = await executeText(trx, text, parameters);
  // The read above is in this transaction, which holds the only writer (SQLite) or the screen's row (PostgreSQL,
  // lockScreenRow): nothing came in between.
  if (Number(result.numAffectedRows) !== fresh.length) throw new Error(`insertNoiseBuckets: ${result.numAffectedRows} of ${fresh.length} buckets inserted`);
  return fresh as NoiseBucketsTable[];
}

/** Whether two rows share a start (a request naming a bucket twice); players send them ascending, so usually one pass. */
function hasDuplicates(rows: readonly NoiseBucketsTable[]): boolean {
  let last = Number.NEGATIVE_INFINITY;
  for (const r of rows) {
    if (r.started_ms <= last) return new Set(rows.map((x) => x.started_ms)).size !== rows.length;
    last = r.started_ms;
  }
  return false;
}

/** What a heartbeat writes on its screen's row. */
export type HeartbeatOnScreen = Pick<
  ScreenRow,
  | 'player_family'
  | 'player_architecture'
  | 'player_version'
  | 'last_heartbeat_at'
  | 'last_seen_at'
  | 'last_seen_ms'
  | 'last_status'
  | 'last_address'
  | 'known_status'
  | 'expected_interval_sec'
>;

type S = HeartbeatOnScreen;
const heartbeatUpdate = (bumpRevision: boolean) =>
  prepared(
    (
      trx: Db,
      screenId: string,
      family: S['player_family'],
      architecture: S['player_architecture'],
      version: S['player_version'],
      heartbeatAt: S['last_heartbeat_at'],
      seenAt: S['last_seen_at'],
      seenMs: S['last_seen_ms'],
      status: S['last_status'],
      address: S['last_address'],
      known: S['known_status'],
      interval: S['expected_interval_sec'],
    ) =>
      trx
        .updateTable('screens')
        .set({
          player_family: family,
          player_architecture: architecture,
          player_version: version,
          last_heartbeat_at: heartbeatAt,
          last_seen_at: seenAt,
          last_seen_ms: seenMs,
          last_status: status,
          last_address: address,
          known_status: known,
          expected_interval_sec: interval,
          ...(bumpRevision ? { manifest_revision: sql<number>`manifest_revision + 1` } : {}),
        })
        .where('id', '=', screenId),
  );
const [updateKeepingRevision, updateBumpingRevision] = [heartbeatUpdate(false), heartbeatUpdate(true)];

/** Writes what a heartbeat reports on the screen's row; `bumpRevision` adds one to its manifest revision. */
export function recordHeartbeatOnScreen(trx: Db, screenId: string, s: HeartbeatOnScreen, bumpRevision: boolean) {
  return (bumpRevision ? updateBumpingRevision : updateKeepingRevision)(
    trx,
    screenId,
    s.player_family,
    s.player_architecture,
    s.player_version,
    s.last_heartbeat_at,
    s.last_seen_at,
    s.last_seen_ms,
    s.last_status,
    s.last_address,
    s.known_status,
    s.expected_interval_sec,
  );
}

/** What a liveness ping compares with and answers. */
export function screenBeforeLiveness(trx: Db, screenId: string) {
  return trx.selectFrom('screens').select(['known_status', 'manifest_revision', 'expected_interval_sec']).where('id', '=', screenId).executeTakeFirst();
}

const insertHistoryRow = prepared((trx: Db, id: string, screenId: string, at: string, atMs: number, kind: string, detail: string) =>
  trx.insertInto('screen_history').values({ id, screen_id: screenId, at, at_ms: atMs, kind, detail }),
);

/** Lines of player history, in one statement (the usual single line of a heartbeat or ping: a prepared one). */
export async function insertHistoryRows(trx: Db, rows: ScreenHistoryTable[]): Promise<void> {
  const [r] = rows;
  if (rows.length === 1 && r) await insertHistoryRow(trx, r.id, r.screen_id, r.at, r.at_ms, r.kind, r.detail);
  else if (rows.length) await trx.insertInto('screen_history').values(rows).execute();
}

/** Every screen's last contact and the status last recorded for it (the status sweep). */
export function screensForStatusSweep(db: Db) {
  return db.selectFrom('screens').select(['id', 'known_status', 'last_seen_ms', 'expected_interval_sec']).execute();
}

/**
 * Records a status transition that happened without a request: the screen's known status
 * and a `status` line of history, in one transaction, only if the screen still reads
 * `from` and was last seen at `seenMs` (what the transition was derived from). A heartbeat
 * or ping that came in meanwhile (on PostgreSQL they run alongside: row-locked) leaves
 * both unwritten. Answers whether it recorded the transition.
 */
export async function recordStatusChange(
  db: Db,
  screenId: string,
  from: string,
  to: ScreenRow['known_status'],
  atMs: number,
  seenMs: number | null,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const updated = await trx
      .updateTable('screens')
      .set({ known_status: to })
      .where('id', '=', screenId)
      .where('known_status', '=', from)
      .where('last_seen_ms', seenMs === null ? 'is' : '=', seenMs)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) return false;
    await trx
      .insertInto('screen_history')
      .values({ id: newId(), screen_id: screenId, at: nowIso(atMs), at_ms: atMs, kind: 'status', detail: JSON.stringify({ from, to }) })
      .execute();
    return true;
  });
}

/** Deletes contacts (heartbeats, liveness pings) received before `beforeMs`, in batches; answers how many. */
export function pruneContactHistory(db: Db, beforeMs: number): Promise<number> {
  return deleteInBatches(
    db,
    (limit) =>
      sql`delete from screen_history where id in (select id from screen_history where kind in ('heartbeat', 'liveness') and at_ms < ${beforeMs} limit ${limit})`,
  );
}

/** Deletes the other player history (status changes, pairing, commands...) before `beforeMs`, in batches; answers how many. */
export function pruneEventHistory(db: Db, beforeMs: number): Promise<number> {
  return deleteInBatches(
    db,
    (limit) =>
      sql`delete from screen_history where id in (select id from screen_history where kind not in ('heartbeat', 'liveness') and at_ms < ${beforeMs} limit ${limit})`,
  );
}

/** The first and last instants a bucket's `startedAt` may name (years 0000 to 9999 in UTC): heartbeats, prunes and reports. */
export const MIN_BUCKET_MS = new Date(0).setUTCFullYear(0, 0, 1);
export const MAX_BUCKET_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * Deletes noise buckets that started before `beforeMs`, screen by screen along the primary key
 * (screen number, start; the table has no time index), in batches; answers how many.
 */
export async function pruneNoiseBuckets(db: Db, beforeMs: number): Promise<number> {
  let total = 0;
  const screens = await db.selectFrom('screens').select('num').execute();
  for (const { num } of screens) {
    // A read first: a screen with nothing to prune costs no write (and no fsync).
    const any = await sql`select 1 from noise_buckets where screen_num = ${num} and started_ms < ${beforeMs} limit 1`.execute(db);
    if (!any.rows.length) continue;
    total += await deleteInBatches(
      db,
      (limit) =>
        sql`delete from noise_buckets where screen_num = ${num} and started_ms in (select started_ms from noise_buckets where screen_num = ${num} and started_ms < ${beforeMs} limit ${limit})`,
    );
  }
  return total;
}
