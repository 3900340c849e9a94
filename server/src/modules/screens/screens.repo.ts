import { sql } from 'kysely';
import { z } from 'zod';
import type { Db } from '../../platform/db/database.js';
import { dialectOf, sqlText } from '../../platform/db/dialect.js';
import { prepared } from '../../platform/db/prepared.js';
import type { ScreensTable } from '../../platform/db/schema.js';
import { afterCursor } from '../../platform/http/pagination.js';
import { NowShowing } from './now-showing.js';
import { commandSupport, CommandSupportDto } from './command-support.js';

export type ScreenRow = ScreensTable;

export { newId, nowIso } from '../../platform/db/ids.js';
import { newId, nowIso } from '../../platform/db/ids.js';

/** Player families the spec knows (2.2); anything else is recorded as absent. */
export const PLAYER_FAMILIES = ['android', 'desktop-linux', 'edge'] as const;
export type PlayerFamily = (typeof PLAYER_FAMILIES)[number];
export const PLAYER_ARCHITECTURES = ['x86_64', 'aarch64'] as const;
export const ORIENTATIONS = ['landscape', 'portrait', 'landscape-flipped', 'portrait-flipped'] as const;
export const SCREEN_STATUSES = ['online', 'offline', 'stale', 'pending'] as const;
export type ScreenStatus = (typeof SCREEN_STATUSES)[number];

export const DEFAULT_HEARTBEAT_INTERVAL_SEC = 30;
/** The display a screen is assumed to have until it reports one: manifests pick full-screen media for it. */
export const DEFAULT_DISPLAY = { width: 1920, height: 1080 } as const;
/** A screen is stale this long after its last contact (when longer than the online window)... */
export const STALE_AFTER_MS = 10 * 60_000;

/** What a lenient field parses to when the value sent is not one it describes (see `lenient`). */
export const UNUSABLE: unique symbol = Symbol('unusable');

/**
 * A field that is never an error (spec 2.2 and 2.4): the schema says what a player should
 * send, and so does the OpenAPI document; any other value parses to UNUSABLE, which the
 * handler records as absent (or, for playback identifiers, names in `ignoredFields`).
 */
export function lenient<T extends z.ZodType>(schema: T): z.ZodType<z.output<T> | typeof UNUSABLE, z.input<T>> {
  return schema.catch(UNUSABLE as z.output<T>) as unknown as z.ZodType<z.output<T> | typeof UNUSABLE, z.input<T>>;
}

/** `playerFamily` as players send it (heartbeat, pairing, enrolment): a known family or null; anything else is recorded as absent. */
export const PlayerFamilyField = lenient(z.literal([...PLAYER_FAMILIES, null]).meta({ type: ['string', 'null'] }))
  .optional()
  .meta({ description: 'android, desktop-linux or edge (null or left out: the web player). Any other value is recorded as absent, never an error.' });

export function asFamily(value: unknown): PlayerFamily | null {
  return typeof value === 'string' && (PLAYER_FAMILIES as readonly string[]).includes(value) ? (value as PlayerFamily) : null;
}

/**
 * Online while the last heartbeat or liveness receipt is within two intervals plus 15 s;
 * stale up to 10 minutes (or 10 intervals, if longer); offline after; pending before the
 * first contact. Display Control fields play no part (spec 2.4 rule 5).
 */
export function onlineWindowMs(intervalSec: number): number {
  return (2 * intervalSec + 15) * 1000;
}
export function staleWindowMs(intervalSec: number): number {
  return Math.max(STALE_AFTER_MS, 10 * intervalSec * 1000, onlineWindowMs(intervalSec));
}

export function deriveStatus(row: Pick<ScreenRow, 'last_seen_ms' | 'expected_interval_sec'>, now = Date.now()): ScreenStatus {
  if (row.last_seen_ms === null) return 'pending';
  const age = now - row.last_seen_ms;
  if (age <= onlineWindowMs(row.expected_interval_sec)) return 'online';
  if (age <= staleWindowMs(row.expected_interval_sec)) return 'stale';
  return 'offline';
}

export const ScreenDto = z
  .object({
    id: z.string(),
    name: z.string(),
    status: z.enum(SCREEN_STATUSES),
    disabled: z.boolean(),
    revoked: z.boolean(),
    playerFamily: z.enum(PLAYER_FAMILIES).nullable(),
    playerArchitecture: z.enum(PLAYER_ARCHITECTURES).nullable(),
    playerVersion: z.string().nullable(),
    locationId: z.string().nullable(),
    timeZone: z.string().nullable(),
    effectiveTimeZone: z.string().describe('The zone the screen runs in: its location’s, else the server’s default time zone (settings.timeZone)'),
    timeZoneSource: z.enum(['location', 'server-default']),
    groupIds: z.array(z.string()),
    notes: z.string().nullable(),
    orientation: z.enum(ORIENTATIONS),
    tags: z.array(z.string()),
    lastSeenAt: z.string().nullable(),
    lastHeartbeatAt: z.string().nullable(),
    lastLivenessAt: z.string().nullable(),
    lastStatus: z.record(z.string(), z.unknown()).nullable(),
    nowShowing: NowShowing.nullable().meta({
      description:
        "What the screen shows: from its last heartbeat's playback identifiers, with names; when it is offline or reported none, what the plan says should play now (`planned: true`); null when neither",
    }),
    commandSupport: CommandSupportDto,
    lastScreenshot: z
      .object({ commandId: z.string(), url: z.string(), takenAt: z.string().nullable() })
      .nullable()
      .describe('The newest screenshot the player sent (a screenshot command’s image), or null'),
    heartbeatIntervalSec: z.number().int(),
    manifestRevision: z.number().int(),
    socketConnected: z.boolean(),
    disabledAt: z.string().nullable(),
    revokedAt: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Screen' });
export type ScreenDto = z.infer<typeof ScreenDto>;

export interface ScreenExtras {
  groupIds: string[];
  timeZone: string | null;
  /** The server's default zone (for screens without a location). */
  defaultTimeZone?: string;
  lastScreenshot?: ScreenDto['lastScreenshot'];
  socketConnected: boolean;
  nowShowing?: NowShowing | null;
}

export function toScreenDto(row: ScreenRow, extras: ScreenExtras, now = Date.now()): ScreenDto {
  return {
    id: row.id,
    name: row.name,
    status: deriveStatus(row, now),
    disabled: row.disabled_at !== null,
    revoked: row.revoked_at !== null,
    playerFamily: asFamily(row.player_family),
    playerArchitecture: (PLAYER_ARCHITECTURES as readonly string[]).includes(row.player_architecture ?? '')
      ? (row.player_architecture as ScreenDto['playerArchitecture'])
      : null,
    playerVersion: row.player_version,
    locationId: row.location_id,
    timeZone: extras.timeZone,
    effectiveTimeZone: extras.timeZone ?? extras.defaultTimeZone ?? 'UTC',
    timeZoneSource: extras.timeZone ? 'location' : 'server-default',
    groupIds: extras.groupIds,
    notes: row.notes,
    orientation: (ORIENTATIONS as readonly string[]).includes(row.orientation) ? (row.orientation as ScreenDto['orientation']) : 'landscape',
    tags: JSON.parse(row.tags) as string[],
    lastSeenAt: row.last_seen_at,
    lastHeartbeatAt: row.last_heartbeat_at,
    lastLivenessAt: row.last_liveness_at,
    lastStatus: row.last_status ? (JSON.parse(row.last_status) as Record<string, unknown>) : null,
    nowShowing: extras.nowShowing ?? null,
    commandSupport: commandSupport(asFamily(row.player_family), row.last_status ? (JSON.parse(row.last_status) as Record<string, unknown>) : null),
    lastScreenshot: extras.lastScreenshot ?? null,
    heartbeatIntervalSec: row.expected_interval_sec,
    manifestRevision: row.manifest_revision,
    socketConnected: extras.socketConnected,
    disabledAt: row.disabled_at,
    revokedAt: row.revoked_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The row of a new screen: pending, never seen, manifest revision 1; `fields` add what the caller knows. */
export function newScreenRow(fields: Pick<ScreenRow, 'id' | 'name'> & Partial<ScreenRow>, now = nowIso()): ScreenRow {
  return {
    location_id: null,
    notes: null,
    orientation: 'landscape',
    tags: '[]',
    disabled_at: null,
    revoked_at: null,
    player_family: null,
    player_architecture: null,
    player_version: null,
    last_heartbeat_at: null,
    last_liveness_at: null,
    last_seen_at: null,
    last_seen_ms: null,
    last_status: null,
    last_address: null,
    known_status: 'pending',
    expected_interval_sec: DEFAULT_HEARTBEAT_INTERVAL_SEC,
    manifest_revision: 1,
    policy: null,
    power_assist: null,
    power_assist_state: null,
    created_at: now,
    updated_at: now,
    ...fields,
  };
}

const screenById = prepared((db: Db, id: string) => db.selectFrom('screens').selectAll().where('id', '=', id));

/** The screen `id` (every device request reads it: prepared). */
export async function findScreen(db: Db, id: string): Promise<ScreenRow | undefined> {
  return (await screenById(db, id)).rows[0];
}

/** A screen's own policy (JSON text or null), with its id and name. */
const policyRow = prepared((db: Db, id: string) => db.selectFrom('screens').select(['id', 'name', 'policy']).where('id', '=', id));

export async function screenPolicyRow(db: Db, id: string): Promise<Pick<ScreenRow, 'id' | 'name' | 'policy'> | undefined> {
  return (await policyRow(db, id)).rows[0];
}

/** Group ids of many screens at once. */
export async function groupIdsOf(db: Db, screenIds: readonly string[]): Promise<Map<string, string[]>> {
  const map = new Map<string, string[]>(screenIds.map((id) => [id, []]));
  if (screenIds.length === 0) return map;
  const rows = await db
    .selectFrom('screen_group_members')
    .innerJoin('screen_groups', 'screen_groups.id', 'screen_group_members.group_id')
    .select(['screen_group_members.screen_id', 'screen_group_members.group_id'])
    .where('screen_group_members.screen_id', 'in', [...screenIds])
    .orderBy('screen_groups.name')
    .orderBy('screen_groups.id')
    .execute();
  for (const r of rows) map.get(r.screen_id)?.push(r.group_id);
  return map;
}

/** The kinds of a screen's player history (GET /screens/{id}/player-history filters on them). */
export const HISTORY_KINDS = [
  'heartbeat',
  'liveness',
  'version',
  'family',
  'status',
  'paired',
  'enrolled',
  'disabled',
  'enabled',
  'revoked',
  'command',
] as const;
export type HistoryKind = (typeof HISTORY_KINDS)[number];

/** One line of a screen's player history. */
export async function recordHistory(db: Db, screenId: string, kind: HistoryKind, detail: Record<string, unknown> = {}, atMs = Date.now()): Promise<void> {
  await db
    .insertInto('screen_history')
    .values({ id: newId(), screen_id: screenId, at: nowIso(atMs), at_ms: atMs, kind, detail: JSON.stringify(detail) })
    .execute();
}

/** Filters of `GET /screens` (see its description). */
export interface ScreenFilter {
  status?: ScreenStatus;
  groupId?: string;
  locationId?: string;
  family?: PlayerFamily | 'unknown';
  q?: string;
  tag?: string;
  disabled?: boolean;
  revoked?: boolean;
  cursor?: string;
  limit: number;
}

/** SQL for "the derived status is X" (same thresholds as deriveStatus). */
function statusCondition(db: Db, status: ScreenStatus, now: number) {
  const online = sql`(${now} - last_seen_ms) <= (2 * expected_interval_sec + 15) * 1000`;
  const staleLimit = sql`${sql.raw(sqlText.greatest(dialectOf(db)))}(${sql.lit(STALE_AFTER_MS)}, 10 * expected_interval_sec * 1000, (2 * expected_interval_sec + 15) * 1000)`;
  switch (status) {
    case 'pending':
      return sql<boolean>`last_seen_ms is null`;
    case 'online':
      return sql<boolean>`last_seen_ms is not null and ${online}`;
    case 'stale':
      return sql<boolean>`last_seen_ms is not null and not ${online} and (${now} - last_seen_ms) <= ${staleLimit}`;
    case 'offline':
      return sql<boolean>`last_seen_ms is not null and (${now} - last_seen_ms) > ${staleLimit}`;
  }
}

/** Screens by name (then id) after the filter's cursor: `limit + 1` rows, for toPage. */
export async function listScreens(db: Db, filter: ScreenFilter, now: number): Promise<ScreenRow[]> {
  let q = db
    .selectFrom('screens')
    .selectAll()
    .where(afterCursor('name', 'id', 'asc', filter.cursor));
  if (filter.status) q = q.where(statusCondition(db, filter.status, now));
  if (filter.groupId) {
    const g = filter.groupId;
    q = q.where((eb) =>
      eb.exists(
        eb.selectFrom('screen_group_members').select('screen_id').whereRef('screen_group_members.screen_id', '=', 'screens.id').where('group_id', '=', g),
      ),
    );
  }
  if (filter.locationId) q = q.where('location_id', '=', filter.locationId);
  if (filter.family) q = filter.family === 'unknown' ? q.where('player_family', 'is', null) : q.where('player_family', '=', filter.family);
  if (filter.q) {
    const needle = filter.q.toLowerCase();
    q = q.where((eb) => eb(eb.fn('instr', [eb.fn('lower', ['name']), eb.val(needle)]), '>', 0));
  }
  if (filter.tag) {
    const tag = filter.tag;
    q = q.where(sql<boolean>`exists (select 1 from ${sql.raw(sqlText.jsonArrayItems(dialectOf(db), 'screens.tags', null, 't', true))} where t.value = ${tag})`);
  }
  if (filter.disabled !== undefined) q = q.where('disabled_at', filter.disabled ? 'is not' : 'is', null);
  if (filter.revoked !== undefined) q = q.where('revoked_at', filter.revoked ? 'is not' : 'is', null);
  return q
    .orderBy('name')
    .orderBy('id')
    .limit(filter.limit + 1)
    .execute();
}

/** Every screen, by name (then id). */
export function allScreens(db: Db): Promise<ScreenRow[]> {
  return db.selectFrom('screens').selectAll().orderBy('name').orderBy('id').execute();
}

/** The screens of `ids` that exist, by name (then id). */
export async function screensByName(db: Db, ids: readonly string[]): Promise<ScreenRow[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom('screens')
    .selectAll()
    .where('id', 'in', [...ids])
    .orderBy('name')
    .orderBy('id')
    .execute();
}

/** Which of `ids` name a screen. */
export async function existingScreenIds(db: Db, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .selectFrom('screens')
    .select('id')
    .where('id', 'in', [...ids])
    .execute();
  return new Set(rows.map((r) => r.id));
}

export async function insertScreen(db: Db, row: ScreenRow): Promise<void> {
  await db.insertInto('screens').values(row).execute();
}

export async function updateScreen(db: Db, id: string, set: Partial<ScreenRow>): Promise<void> {
  await db.updateTable('screens').set(set).where('id', '=', id).execute();
}

export async function deleteScreenRow(db: Db, id: string): Promise<void> {
  await db.deleteFrom('screens').where('id', '=', id).execute();
}

/** A page of a screen's player history, newest first (`limit + 1` rows, for toPage). */
export function screenHistoryPage(db: Db, screenId: string, filter: { beforeId?: string; kinds?: string[]; fromMs?: number; toMs?: number; limit: number }) {
  let q = db.selectFrom('screen_history').selectAll().where('screen_id', '=', screenId);
  if (filter.beforeId) q = q.where('id', '<', filter.beforeId);
  if (filter.kinds) q = q.where('kind', 'in', filter.kinds);
  if (filter.fromMs !== undefined) q = q.where('at_ms', '>=', filter.fromMs);
  if (filter.toMs !== undefined) q = q.where('at_ms', '<', filter.toMs);
  return q
    .orderBy('id', 'desc')
    .limit(filter.limit + 1)
    .execute();
}

/** Adds one to the manifest revision of each screen of `ids` (unknown ids are skipped); answers the new revisions. */
export async function incrementManifestRevisions(db: Db, ids: readonly string[]): Promise<{ id: string; manifest_revision: number }[]> {
  const rows: { id: string; manifest_revision: number }[] = [];
  // Chunks keep the statement under SQLite's parameter limit for big fleets.
  for (let i = 0; i < ids.length; i += 500) {
    const chunk = ids.slice(i, i + 500);
    const updated = await db
      .updateTable('screens')
      .set({ manifest_revision: sql`manifest_revision + 1` })
      .where('id', 'in', chunk)
      .returning(['id', 'manifest_revision'])
      .execute();
    rows.push(...updated);
  }
  return rows;
}

/** Every screen's id. */
export async function allScreenIds(db: Db): Promise<string[]> {
  return (await db.selectFrom('screens').select('id').execute()).map((r) => r.id);
}

/** What the fleet's status counts read of every screen. */
export function screensForFleetStatus(db: Db) {
  return db.selectFrom('screens').select(['last_seen_ms', 'expected_interval_sec', 'disabled_at', 'revoked_at']).execute();
}

/** Screens with a power-assist schedule that may take commands (neither disabled nor revoked). */
export function powerAssistedScreens(db: Db): Promise<ScreenRow[]> {
  return db.selectFrom('screens').selectAll().where('power_assist', 'is not', null).where('disabled_at', 'is', null).where('revoked_at', 'is', null).execute();
}

/** A screen's contacts (heartbeats and liveness pings) received from `fromMs` to `toMs`, oldest first. */
export function contactsBetween(db: Db, screenId: string, fromMs: number, toMs: number) {
  return db
    .selectFrom('screen_history')
    .select(['at_ms', 'kind'])
    .where('screen_id', '=', screenId)
    .where('kind', 'in', ['heartbeat', 'liveness'])
    .where('at_ms', '>=', fromMs)
    .where('at_ms', '<=', toMs)
    .orderBy('at_ms')
    .execute();
}
