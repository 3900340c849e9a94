/**
 * What content needs to know about screens, groups and locations (owned by the screens
 * module): a screen's context, read with plain SQL (screen-context.repo.ts) so this module
 * does not reach into theirs. Who a target reaches, and the default zone, are the schedules
 * module's (modules/schedules/fleet-context.ts).
 */
import type { Db } from '../../platform/db/database.js';
import { defaultTimeZone } from '../schedules/index.js';
import { mostCommonGroupZone, type ScreenContextRow, screenContextRow } from './screen-context.repo.js';

export { defaultTimeZone, screensOf, type Targets } from '../schedules/index.js';

export interface ScreenContext {
  id: string;
  name: string;
  timeZone: string;
  locationId: string | null;
  groupIds: string[];
  manifestRevision: number;
  /** The display size (device pixels) the player last reported, when plausible: full-screen media is picked for it. */
  display: { width: number; height: number } | null;
  /**
   * False when the screen was in no presentation network as its context was read (then the
   * manifest asks no network provider: manifest-network.ts); absent when not read.
   */
  inNetwork?: boolean;
}

const plausible = (n: unknown): n is number => typeof n === 'number' && n >= 16 && n <= 16384;

export async function screenContext(db: Db, screenId: string): Promise<ScreenContext | undefined> {
  const row = await screenContextRow(db, screenId);
  return row ? contextOfRow(db, row) : undefined;
}

/**
 * A screen's context made of its row: the one `screenContext` reads, or the one a device
 * route's authentication read with the credential (screens module, `readsDeviceContextOnly`:
 * the same columns). Asks for nothing when the screen has a location (no default zone needed).
 */
export function contextOfRow(
  db: Db,
  row: Omit<ScreenContextRow, 'display_width' | 'display_height'> & { display_width: unknown; display_height: unknown; in_network?: number },
): ScreenContext | Promise<ScreenContext> {
  const make = (timeZone: string): ScreenContext => ({
    id: row.id,
    name: row.name,
    timeZone,
    locationId: row.location_id,
    groupIds: JSON.parse(row.group_ids) as string[],
    manifestRevision: row.manifest_revision,
    display:
      plausible(row.display_width) && plausible(row.display_height) ? { width: Math.round(row.display_width), height: Math.round(row.display_height) } : null,
    ...(row.in_network === undefined ? {} : { inNetwork: row.in_network === 1 }),
  });
  return row.time_zone !== null ? make(row.time_zone) : defaultTimeZone(db).then(make);
}

/** The zone most of a group's members are in (ties: alphabetical), else the default. */
export async function groupZone(db: Db, groupId: string): Promise<string> {
  return (await mostCommonGroupZone(db, groupId)) ?? (await defaultTimeZone(db));
}
