import type { AppDeps } from '../../platform/app-deps.js';
import { ScopeKey } from '../../platform/app-scope.js';
/**
 * "What is this screen showing?" for the screen document (`nowShowing`): what the player
 * last reported in its heartbeat (the spec's playback identifiers, DESIGN.md section 6),
 * with names; when the screen is offline, never seen, or reported nothing, what the plan
 * says should play now, marked `planned`. The content module owns names and the plan: it
 * registers a describer here (the screens module does not read content tables).
 */
import { z } from 'zod';
import type { Db } from '../../platform/db/database.js';
import type { ScreensTable } from '../../platform/db/schema.js';

export const NowShowing = z
  .object({
    planned: z.boolean().meta({ description: 'true: nothing current was reported; this is what the plan says should play now' }),
    reportedAt: z.string().nullable().meta({ description: 'The heartbeat that reported it (null when planned)' }),
    assetId: z.string().nullable(),
    assetName: z.string().nullable(),
    playlistId: z.string().nullable(),
    playlistName: z.string().nullable(),
    layoutId: z.string().nullable(),
    layoutName: z.string().nullable(),
    scheduleId: z.string().nullable(),
    scheduleName: z.string().nullable(),
  })
  .meta({ id: 'NowShowing' });
export type NowShowing = z.infer<typeof NowShowing>;

/** Playback identifiers a heartbeat carried (already checked and lower-cased at ingest). */
export interface ReportedPlayback {
  assetId: string | null;
  playlistId: string | null;
  layoutId: string | null;
  scheduleId: string | null;
}

export interface NowShowingRequest {
  screenId: string;
  /** Null: use the plan. */
  reported: (ReportedPlayback & { reportedAt: string }) | null;
}

/** Answers one entry per request (null: nothing reported and nothing planned). */
export type NowShowingDescriber = (db: Db, requests: readonly NowShowingRequest[], now: number) => Promise<Map<string, NowShowing | null>>;

const DESCRIBER = new ScopeKey<{ describe: NowShowingDescriber | null }>('screens.now-showing-describer', () => ({ describe: null }));

/** The content module registers the one describer (a later call replaces it). */
export function registerNowShowingDescriber(deps: AppDeps, fn: NowShowingDescriber): void {
  deps.scope.get(DESCRIBER).describe = fn;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The playback ids of the last heartbeat, when the screen is online or stale and reported any. */
export function reportedPlayback(
  row: Pick<ScreensTable, 'last_status' | 'last_heartbeat_at'>,
  status: string,
): (ReportedPlayback & { reportedAt: string }) | null {
  if (status !== 'online' && status !== 'stale') return null;
  if (!row.last_status || !row.last_heartbeat_at) return null;
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(row.last_status) as Record<string, unknown>;
  } catch {
    return null;
  }
  const id = (k: string) => (typeof doc[k] === 'string' && UUID.test(doc[k] as string) ? (doc[k] as string) : null);
  const out = { assetId: id('currentAssetId'), playlistId: id('currentPlaylistId'), layoutId: id('currentLayoutId'), scheduleId: id('currentScheduleId') };
  if (!out.assetId && !out.playlistId && !out.layoutId) return null;
  return { ...out, reportedAt: row.last_heartbeat_at };
}

/** `nowShowing` for many screens at once. Without a describer: the reported ids, no names. */
export async function nowShowingOf(
  deps: AppDeps,
  rows: readonly { row: ScreensTable; status: string }[],
  now = Date.now(),
): Promise<Map<string, NowShowing | null>> {
  const requests = rows.map(({ row, status }) => ({ screenId: row.id, reported: reportedPlayback(row, status) }));
  const { describe } = deps.scope.get(DESCRIBER);
  if (describe) return describe(deps.db, requests, now);
  const out = new Map<string, NowShowing | null>();
  for (const q of requests) {
    out.set(
      q.screenId,
      q.reported
        ? {
            planned: false,
            reportedAt: q.reported.reportedAt,
            assetId: q.reported.assetId,
            assetName: null,
            playlistId: q.reported.playlistId,
            playlistName: null,
            layoutId: q.reported.layoutId,
            layoutName: null,
            scheduleId: q.reported.scheduleId,
            scheduleName: null,
          }
        : null,
    );
  }
  return out;
}
