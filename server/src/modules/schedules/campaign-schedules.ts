/**
 * The schedules a campaign release makes (docs/campaigns.md): one per placement, showing the
 * campaign within its window, marked `campaign_owned` so the next release replaces them and
 * deleting the campaign removes them. Runs in the caller's transaction; the caller tells the
 * screens (the answer names them) once it committed.
 */
import type { Db } from '../../platform/db/database.js';
import { newId, nowIso } from '../../platform/db/ids.js';
import { screensOf, type Targets } from './fleet-context.js';
import { campaignScheduleIds, deleteCampaignScheduleRows } from './campaign-schedules.repo.js';
import { insertSchedule, targetsOf, writeTargets } from './schedules.repo.js';
import { prepare } from './schedules.service.js';

export interface CampaignPlacement {
  name?: string | undefined;
  targets: Partial<Targets>;
  priority: number;
  rrule?: string | null | undefined;
  timeZone?: string | null | undefined;
}

/** Screens reached by every schedule showing `campaignId` (owned or not). */
export async function campaignScheduleScreens(db: Db, campaignId: string, ownedOnly = false): Promise<string[]> {
  const screens = new Set<string>();
  for (const id of await campaignScheduleIds(db, campaignId, ownedOnly)) for (const s of await screensOf(db, await targetsOf(db, id))) screens.add(s);
  return [...screens];
}

/**
 * Replaces the campaign's owned schedules by `placements` over `window`. Checks each like a
 * schedule POST (400 for a missing target, a bad zone or rule). Answers the screens reached
 * before and after.
 */
export async function replaceCampaignSchedules(
  trx: Db,
  campaign: { id: string; name: string },
  window: { startsAt: string; endsAt: string },
  placements: readonly CampaignPlacement[],
  by: string | null,
): Promise<string[]> {
  const screens = new Set(await campaignScheduleScreens(trx, campaign.id, true));
  await deleteCampaignScheduleRows(trx, campaign.id, true);
  const t = nowIso();
  for (const [i, p] of placements.entries()) {
    const { row, targets } = await prepare(trx, {
      name: p.name || `${campaign.name} #${i + 1}`,
      content: { campaignId: campaign.id },
      targets: { screenIds: p.targets.screenIds ?? [], groupIds: p.targets.groupIds ?? [], locationIds: p.targets.locationIds ?? [] },
      startsAt: window.startsAt,
      endsAt: window.endsAt,
      rrule: p.rrule ?? null,
      timeZone: p.timeZone ?? null,
      priority: p.priority,
      enabled: true,
    });
    const id = newId();
    // Published with the release (its publication is the campaign's release, not one of its own).
    await insertSchedule(trx, id, { ...row, campaign_owned: 1, draft: null, published_at: t }, by, t);
    await writeTargets(trx, id, targets);
    for (const s of await screensOf(trx, targets)) screens.add(s);
  }
  return [...screens];
}

/** Deletes every schedule showing the campaign (owned or not); answers the screens they reached. */
export async function deleteCampaignSchedules(trx: Db, campaignId: string): Promise<string[]> {
  const screens = await campaignScheduleScreens(trx, campaignId);
  await deleteCampaignScheduleRows(trx, campaignId, false);
  return screens;
}
