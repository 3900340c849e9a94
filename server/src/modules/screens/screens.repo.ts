import { z } from 'zod';
import type { Db } from '../../platform/db/database.js';
import type { ScreensTable } from '../../platform/db/schema.js';
import { NowShowing, nowShowingOf } from './now-showing.js';
import { commandSupport, CommandSupportDto } from './command-support.js';
import { cachedSettings } from '../system/index.js';

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

export function findScreen(db: Db, id: string): Promise<ScreenRow | undefined> {
  return db.selectFrom('screens').selectAll().where('id', '=', id).executeTakeFirst();
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

/** DTOs for rows, with groups, time zones and socket state filled in. */
export async function screenDtos(db: Db, rows: readonly ScreenRow[], connected: (id: string) => boolean): Promise<ScreenDto[]> {
  const groups = await groupIdsOf(
    db,
    rows.map((r) => r.id),
  );
  const locIds = [...new Set(rows.map((r) => r.location_id).filter((x): x is string => x !== null))];
  const zones = new Map<string, string>();
  if (locIds.length) {
    for (const l of await db.selectFrom('locations').select(['id', 'time_zone']).where('id', 'in', locIds).execute()) zones.set(l.id, l.time_zone);
  }
  const now = Date.now();
  const showing = await nowShowingOf(
    db,
    rows.map((row) => ({ row, status: deriveStatus(row, now) })),
    now,
  );
  const defaultTimeZone = (await cachedSettings(db)).timeZone;
  const shots = await lastScreenshots(
    db,
    rows.map((r) => r.id),
  );
  return rows.map((r) =>
    toScreenDto(
      r,
      {
        groupIds: groups.get(r.id) ?? [],
        timeZone: r.location_id ? (zones.get(r.location_id) ?? null) : null,
        defaultTimeZone,
        lastScreenshot: shots.get(r.id) ?? null,
        socketConnected: connected(r.id),
        nowShowing: showing.get(r.id) ?? null,
      },
      now,
    ),
  );
}

/** The newest screenshot each screen sent (one query for the page of screens). */
async function lastScreenshots(db: Db, screenIds: readonly string[]): Promise<Map<string, NonNullable<ScreenDto['lastScreenshot']>>> {
  const out = new Map<string, NonNullable<ScreenDto['lastScreenshot']>>();
  for (let i = 0; i < screenIds.length; i += 500) {
    const chunk = screenIds.slice(i, i + 500);
    const rows = await db
      .selectFrom('screen_commands')
      .select(['screen_id', 'id', 'completed_at'])
      .where('screen_id', 'in', chunk)
      .where('type', '=', 'screenshot')
      .where('screenshot_sha256', 'is not', null)
      .orderBy('id', 'desc')
      .execute();
    for (const r of rows)
      if (!out.has(r.screen_id))
        out.set(r.screen_id, { commandId: r.id, url: `/api/v1/screens/${r.screen_id}/commands/${r.id}/screenshot`, takenAt: r.completed_at });
  }
  return out;
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
