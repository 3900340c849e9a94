import { z } from 'zod';
import type { Transaction } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import type { Database } from '../../platform/db/schema.js';
import { storableJson } from '../../platform/db/json.js';
import { ApiError } from '../../platform/http/errors.js';
import type { RealtimeHub } from '../../platform/realtime/hub.js';
import { groupCommit, ROW_LOCKED } from './group-commit.js';
import {
  insertHistoryRows,
  insertNoiseBuckets,
  lockScreenRow,
  recordHeartbeatOnScreen,
  screenBeforeHeartbeat,
  screenBeforeLiveness,
} from './heartbeat.repo.js';
import { gridMs, parseGridTime, parseGridTimeFully } from './heartbeat-time.js';
import { aggregateBuckets, addToRollups } from './noise-rollups.repo.js';
import { effectivePolicyValue } from './policies.js';
import { cachedSettings } from '../system/index.js';
import { asFamily, DEFAULT_DISPLAY, lenient, newId, nowIso, PLAYER_ARCHITECTURES, PlayerFamilyField, UNUSABLE, updateScreen } from './screens.repo.js';

export { BUCKET_MS, gridMs, parseGridTime, parseGridTimeFully } from './heartbeat-time.js';

/** Limits of spec section 8. */
export const MAX_BUCKETS = 120;
const ASSUMED_DISPLAY = `${DEFAULT_DISPLAY.width}x${DEFAULT_DISPLAY.height}`;
export const NOISE_STATUSES = ['active', 'normal', 'loud', 'unavailable', 'inactive'] as const;

/** Optional playback identifiers: a malformed one is dropped and named in ignoredFields. */
export const PLAYBACK_ID_FIELDS = [
  'currentPlaylistId',
  'currentLayoutId',
  'currentItemId',
  'currentAssetId',
  'currentScheduleId',
  'currentCampaignId',
] as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MALFORMED_ID = 'A value that is not a UUID (or null) is dropped and named in the reply’s `ignoredFields`, never an error.';
const PLAYBACK_ID_DESCRIPTIONS: Record<(typeof PLAYBACK_ID_FIELDS)[number], string> = {
  currentPlaylistId: `The playlist playing now: the manifest segment's, or in a layout the playlist of the first zone showing an item. ${MALFORMED_ID}`,
  currentLayoutId: `The layout on screen, when the segment playing now is a layout. ${MALFORMED_ID}`,
  currentItemId: `The playlist item on screen (in a layout, the first zone showing one). ${MALFORMED_ID}`,
  currentAssetId: `The asset that item shows. ${MALFORMED_ID}`,
  currentScheduleId: `The schedule whose segment plays now; left out or null when an assignment chose it. ${MALFORMED_ID}`,
  currentCampaignId: `The campaign of the segment playing now, if any. ${MALFORMED_ID}`,
};

const Level = z.number().min(0).max(100);
const Ms = z.number().int().min(0).max(10_000);

/** `startedAt`: an RFC 3339 date-time on the fixed ten-second grid (any offset; stored as UTC). */
const GridTime = z
  .string()
  .max(64)
  .superRefine((s, ctx) => {
    const r = parseGridTime(s);
    if ('error' in r) ctx.addIssue({ code: 'custom', message: `startedAt must be ${r.error}` });
  })
  .meta({ format: 'date-time' });

export const NoiseBucket = z
  .looseObject({
    startedAt: GridTime,
    averageLevel: Level,
    peakLevel: Level,
    monitoredMs: Ms,
    warningMs: Ms,
    loudMs: Ms,
    triggerCount: z.number().int().min(0).max(1000).nullable().optional(),
  })
  .meta({ id: 'NoiseBucket' });

/** The body's fields; `pendingHistory` is the parameter (heartbeatBody, HeartbeatBody). */
function heartbeatBody<H extends z.ZodType>(pendingHistory: H) {
  return z.looseObject({
    // Never errors: what a player should send is typed (and documented); anything else
    // parses to UNUSABLE and is recorded as absent or named in ignoredFields.
    playerFamily: PlayerFamilyField,
    playerArchitecture: lenient(z.literal([...PLAYER_ARCHITECTURES, null]).meta({ type: ['string', 'null'] }))
      .optional()
      .meta({ description: 'x86_64 or aarch64; kept for the edge family only. Any other value is recorded as absent, never an error.' }),
    playerVersion: lenient(z.string().max(100).nullable())
      .optional()
      .meta({ description: 'The player’s version, at most 100 characters. Any other value is recorded as absent, never an error.' }),
    ...(Object.fromEntries(
      PLAYBACK_ID_FIELDS.map((field) => [
        field,
        lenient(z.string().regex(UUID).meta({ format: 'uuid' }).nullable())
          .optional()
          .meta({ description: PLAYBACK_ID_DESCRIPTIONS[field] }),
      ]),
    ) as Record<(typeof PLAYBACK_ID_FIELDS)[number], z.ZodOptional<z.ZodType<string | null | typeof UNUSABLE, string | null>>>),
    noiseMeter: z
      .looseObject({
        status: z.enum(NOISE_STATUSES).nullable().optional(),
        currentLevel: Level.nullable().optional(),
        pendingHistory: pendingHistory.nullable().optional(),
      })
      .nullable()
      .optional(),
  });
}

/**
 * The player status document (spec 2.2). Additive: fields beyond these are accepted and
 * kept in the screen's last status. `playerFamily`/`playerArchitecture` are never errors,
 * nor are malformed playback identifiers; the noise meter's bounds are.
 */
export const HeartbeatBody = heartbeatBody(z.array(NoiseBucket).max(MAX_BUCKETS)).meta({ id: 'HeartbeatBody' });

const isLevel = (v: unknown) => typeof v === 'number' && v >= 0 && v <= 100;
const isMs = (v: unknown) => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 10_000;

/**
 * The bucket array checked by hand: true only when NoiseBucket's schema accepts every
 * bucket as it is (its output is then the same values). Zod's generic object machinery
 * cost more than the buckets' insert (issue 24's profile of a 120-bucket heartbeat).
 */
export function bucketsValid(list: unknown): list is z.infer<typeof NoiseBucket>[] {
  if (!Array.isArray(list) || list.length > MAX_BUCKETS) return false;
  for (const b of list as unknown[]) {
    if (typeof b !== 'object' || b === null || Array.isArray(b)) return false;
    const o = b as Record<string, unknown>;
    if (typeof o.startedAt !== 'string' || gridMs(o.startedAt) === null) return false;
    if (!isLevel(o.averageLevel) || !isLevel(o.peakLevel) || !isMs(o.monitoredMs) || !isMs(o.warningMs) || !isMs(o.loudMs)) return false;
    const t = o.triggerCount;
    if (t !== undefined && t !== null && !(Number.isInteger(t) && (t as number) >= 0 && (t as number) <= 1000)) return false;
  }
  return true;
}

export type HeartbeatBody = z.infer<typeof HeartbeatBody>;

/** The same body with the buckets taken as they are: for a bucket array bucketsValid accepted. */
const HeartbeatBodyCheckedBuckets = heartbeatBody(z.array(z.unknown()));
/** HeartbeatBody's zod validation alone, without the bucket fast path: the reference for tests. */
export const safeParseHeartbeatFully = (data: unknown) => HeartbeatBody.safeParse(data);

/**
 * The heartbeat route's body pre-check (RouteDef.bodyPrecheck): a body with buckets that pass
 * bucketsValid has the rest checked by zod and the buckets kept as they are. Anything else,
 * and any failure, is left to the router's full HeartbeatBody validation, so a refused body
 * gets zod's own issues, messages and order, unchanged.
 */
export function precheckHeartbeatBody(data: unknown): { data: HeartbeatBody } | undefined {
  const history = (data as { noiseMeter?: { pendingHistory?: unknown } } | null)?.noiseMeter?.pendingHistory;
  if (!Array.isArray(history) || !history.length || !bucketsValid(history)) return undefined;
  const rest = HeartbeatBodyCheckedBuckets.safeParse(data);
  return rest.success ? { data: rest.data as HeartbeatBody } : undefined;
}

export const HeartbeatReply = z
  .object({
    ignoredFields: z.array(z.string()),
    noiseHistory: z.object({ accepted: z.number().int() }),
    serverTime: z.string(),
    manifestRevision: z.number().int(),
    heartbeatIntervalSec: z.number().int(),
    pendingCommands: z.number().int(),
  })
  .meta({ id: 'HeartbeatReply' });
export type HeartbeatReply = z.infer<typeof HeartbeatReply>;

/** The last status document is kept up to this many bytes of JSON (the console shows it whole). */
export const MAX_STATUS_BYTES = 64 * 1024;

/**
 * Status fields the console reads (docs/player-protocol.md section 3): a document over
 * MAX_STATUS_BYTES loses other fields first, so these survive unless one alone is huge.
 */
export const KEPT_STATUS_FIELDS: readonly string[] = [
  'playerFamily',
  'playerArchitecture',
  'playerVersion',
  'os',
  'resolution',
  'display',
  'storage',
  'cache',
  'displayControl',
  'noiseMeter',
  'manifestRevision',
  'socketConnected',
  'playerStartedAt',
  'userAgent',
  'lastError',
  ...PLAYBACK_ID_FIELDS,
];
const KEPT = new Set(KEPT_STATUS_FIELDS);
/** How many dropped names the marker lists, and how much of each. */
const DROPPED_LISTED = 50;
const DROPPED_NAME_CHARS = 64;

/**
 * The status document as stored: whole when it fits MAX_STATUS_BYTES; otherwise top-level
 * fields are dropped, largest first, those outside KEPT_STATUS_FIELDS before the kept
 * ones, until it fits, and `truncated: true` with `droppedFields` (the first 50 names)
 * says what went.
 */
export function fitStatusDocument(status: Record<string, unknown>): string {
  // Refused (400) when SQLite could not read it: a stored status breaks every query over the row otherwise.
  const whole = storableJson(status, 'The status document');
  const total = Buffer.byteLength(whole);
  if (total <= MAX_STATUS_BYTES) return whole;
  const entries = Object.entries(status).map(([key, value]) => ({
    key,
    kept: KEPT.has(key),
    // `"key":value,` in the serialised object
    bytes: Buffer.byteLength(JSON.stringify(key)) + Buffer.byteLength(JSON.stringify(value) ?? '') + 2,
  }));
  entries.sort((a, b) => Number(a.kept) - Number(b.kept) || b.bytes - a.bytes);
  const out: Record<string, unknown> = { ...status };
  const dropped: string[] = [];
  let size = total;
  let marker = Buffer.byteLength('"truncated":true,"droppedFields":[],"droppedFieldCount":000000,');
  for (const e of entries) {
    if (size + marker <= MAX_STATUS_BYTES) break;
    delete out[e.key];
    size -= e.bytes;
    if (dropped.length < DROPPED_LISTED) {
      const name = e.key.slice(0, DROPPED_NAME_CHARS);
      dropped.push(name);
      marker += Buffer.byteLength(JSON.stringify(name)) + 1;
    }
  }
  const droppedCount = Object.keys(status).length - Object.keys(out).length;
  const text = JSON.stringify({ ...out, truncated: true, droppedFields: dropped, droppedFieldCount: droppedCount });
  // The arithmetic above is exact for plain JSON values; this guards the rest (toJSON and the like).
  return Buffer.byteLength(text) <= MAX_STATUS_BYTES
    ? text
    : JSON.stringify({ truncated: true, droppedFields: [], droppedFieldCount: Object.keys(status).length });
}

export interface HeartbeatDeps {
  db: Db;
  /** When present, a heartbeat that changes the manifest revision pushes `manifest.changed`. */
  realtime?: RealtimeHub;
  /** Benchmarks only (scripts/bench/noise-reports.ts): skip the noise roll-ups to measure what they cost. */
  skipNoiseRollups?: boolean;
}

/**
 * Ingests one heartbeat for the authenticated screen (never a `screenId` from the body):
 * noise buckets idempotently on (screen, startedAt), the screen's status and history, all
 * in one transaction that is durable (synchronous=FULL) before the reply (group commit:
 * heartbeats arriving together share the transaction and its fsync). A reported display
 * size that differs from the last one bumps the manifest revision and, once committed,
 * pushes `manifest.changed` on the screen's socket.
 */
export async function ingestHeartbeat(
  deps: HeartbeatDeps,
  screenId: string,
  body: HeartbeatBody,
  address: string | null,
  now = Date.now(),
): Promise<HeartbeatReply> {
  const db = deps.db;
  const ignoredFields: string[] = [];
  const status: Record<string, unknown> = { ...body };
  for (const field of PLAYBACK_ID_FIELDS) {
    const v = body[field];
    if (v === UNUSABLE) {
      ignoredFields.push(field);
      delete status[field];
    } else if (typeof v === 'string') {
      status[field] = v.toLowerCase();
    }
  }
  delete status.screenId; // the screen comes from the credential only
  if (body.playerVersion === UNUSABLE) delete status.playerVersion;

  const buckets = body.noiseMeter?.pendingHistory ?? [];
  if (status.noiseMeter && typeof status.noiseMeter === 'object') {
    const { pendingHistory: _omit, ...rest } = status.noiseMeter as Record<string, unknown>;
    status.noiseMeter = { ...rest, pendingHistoryCount: buckets.length };
  }
  const display = (status.display && typeof status.display === 'object' ? status.display : null) as { width?: unknown; height?: unknown } | null;
  const side = (n: unknown) => (typeof n === 'number' && n >= 16 && n <= 16384 ? Math.round(n) : null);
  const w = side(display?.width);
  const h = side(display?.height);
  // The same normalisation as the stored side (screenBeforeHeartbeat) and the manifest's (content/screen-context.ts).
  const displayKey = w !== null && h !== null ? `${w}x${h}` : null;

  const nowText = nowIso(now);

  // The default zone (a screen without a location's), cached by the settings module: no query.
  const defaultZone = buckets.length ? (await cachedSettings(db)).timeZone : null;
  // Its writes are this screen's row, its noise rows and new history lines: row-locked.
  const write = async (trx: Transaction<Database>) => {
    await lockScreenRow(trx, screenId);
    const before = await screenBeforeHeartbeat(trx, screenId, nowText);
    if (!before) return null; // deleted meanwhile: nothing of this heartbeat is written
    // Family: an unknown value is recorded as absent; omitting the field keeps the last one.
    const family = 'playerFamily' in body ? asFamily(body.playerFamily) : (asFamily(before.player_family) ?? null);
    const archRaw = 'playerArchitecture' in body ? body.playerArchitecture : before.player_architecture;
    const architecture = family === 'edge' && typeof archRaw === 'string' && (PLAYER_ARCHITECTURES as readonly string[]).includes(archRaw) ? archRaw : null;
    const version = typeof body.playerVersion === 'string' ? body.playerVersion : 'playerVersion' in body ? null : before.player_version;
    status.playerFamily = family;
    status.playerArchitecture = architecture;
    // Refused (400, the job's error) when SQLite could not read it: nothing of this heartbeat is written then.
    const statusText = fitStatusDocument(status);
    // The manifest picks media for the reported display size: a new size is a new revision,
    // which the reply carries, so the player fetches the manifest made for it. No size is the
    // assumed one (DEFAULT_DISPLAY), so a first report of that size changes no manifest.
    const displayChanged = (before.display ?? ASSUMED_DISPLAY) !== (displayKey ?? ASSUMED_DISPLAY);
    // The policy's interval, from the texts read with the screen (no query of its own).
    const interval = effectivePolicyValue('heartbeatIntervalSec', before.policy, JSON.parse(before.group_policies) as (string | null)[]);
    if (buckets.length) {
      const num = before.num!;
      const rows = buckets.map((b) => ({
        screen_num: num,
        // Validated by the schema: gridMs reads the usual forms, the full parse the rest.
        started_ms: gridMs(b.startedAt) ?? (parseGridTimeFully(b.startedAt) as { ms: number }).ms,
        average_level: b.averageLevel,
        peak_level: b.peakLevel,
        monitored_ms: b.monitoredMs,
        warning_ms: b.warningMs,
        loud_ms: b.loudMs,
        trigger_count: b.triggerCount ?? null,
        received_ms: now,
      }));
      // First write wins: a retry (or a concurrent duplicate) finds its buckets there, and
      // the roll-ups add only what was inserted, so a retry adds nothing twice.
      const inserted = await insertNoiseBuckets(trx, num, rows);
      if (inserted.length && !deps.skipNoiseRollups) await addToRollups(trx, aggregateBuckets(num, inserted, before.time_zone ?? defaultZone ?? 'UTC'));
    }
    await recordHeartbeatOnScreen(
      trx,
      screenId,
      {
        player_family: family,
        player_architecture: architecture,
        player_version: version,
        last_heartbeat_at: nowText,
        last_seen_at: nowText,
        last_seen_ms: now,
        last_status: statusText,
        last_address: address,
        known_status: 'online',
        expected_interval_sec: interval,
      },
      displayChanged,
    );
    const history: { kind: string; detail: Record<string, unknown> }[] = [{ kind: 'heartbeat', detail: { playerVersion: version, buckets: buckets.length } }];
    if (before.player_version !== version && version !== null) history.push({ kind: 'version', detail: { from: before.player_version, to: version } });
    if (before.player_family !== family) history.push({ kind: 'family', detail: { from: before.player_family, to: family } });
    if (before.known_status !== 'online') history.push({ kind: 'status', detail: { from: before.known_status, to: 'online' } });
    await insertHistoryRows(
      trx,
      history.map((h) => ({ id: newId(), screen_id: screenId, at: nowText, at_ms: now, kind: h.kind, detail: JSON.stringify(h.detail) })),
    );
    return {
      manifestRevision: before.manifest_revision + (displayChanged ? 1 : 0),
      displayChanged,
      pendingCommands: Number(before.pending_commands),
      interval,
    };
  };
  const result = await groupCommit(db, write, ROW_LOCKED);

  if (!result) throw new ApiError('invalid_credential', 'Unknown device credential');
  // Pushed after the commit (as bumpManifestRevision does), so a player that fetches at once sees it.
  if (result.displayChanged) deps.realtime?.send(screenId, { type: 'manifest.changed', revision: result.manifestRevision });
  return {
    ignoredFields,
    // Every bucket of the request is stored now (new or already there): a retry gets the same count.
    noiseHistory: { accepted: buckets.length },
    serverTime: nowIso(),
    manifestRevision: result.manifestRevision,
    heartbeatIntervalSec: result.interval,
    pendingCommands: result.pendingCommands,
  };
}

/** A liveness ping: keeps the screen online between heartbeats, nothing else. */
export async function recordLiveness(
  db: Db,
  screenId: string,
  address: string | null,
  now = Date.now(),
): Promise<{ manifestRevision: number; heartbeatIntervalSec: number }> {
  const nowText = nowIso(now);
  const write = async (trx: Transaction<Database>) => {
    await lockScreenRow(trx, screenId);
    const before = await screenBeforeLiveness(trx, screenId);
    if (!before) return null;
    await updateScreen(trx, screenId, { last_liveness_at: nowText, last_seen_at: nowText, last_seen_ms: now, last_address: address, known_status: 'online' });
    const rows = [{ id: newId(), screen_id: screenId, at: nowText, at_ms: now, kind: 'liveness', detail: '{}' }];
    if (before.known_status !== 'online')
      rows.push({
        id: newId(),
        screen_id: screenId,
        at: nowText,
        at_ms: now,
        kind: 'status',
        detail: JSON.stringify({ from: before.known_status, to: 'online' }),
      });
    await insertHistoryRows(trx, rows);
    return { manifestRevision: before.manifest_revision, heartbeatIntervalSec: before.expected_interval_sec };
  };
  const result = await groupCommit(db, write, ROW_LOCKED);
  if (!result) throw new ApiError('invalid_credential', 'Unknown device credential');
  return result;
}
