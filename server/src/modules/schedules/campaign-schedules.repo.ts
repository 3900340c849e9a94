/** The schedules of a campaign (campaign-schedules.ts): ids and deletion. */
import type { Db } from '../../platform/db/database.js';

/** The schedules showing the campaign (only those its releases made, with `ownedOnly`). */
export async function campaignScheduleIds(db: Db, campaignId: string, ownedOnly: boolean): Promise<string[]> {
  let q = db.selectFrom('schedules').select('id').where('campaign_id', '=', campaignId);
  if (ownedOnly) q = q.where('campaign_owned', '=', 1);
  return (await q.execute()).map((r) => r.id);
}

/** Deletes them (their targets cascade). */
export async function deleteCampaignScheduleRows(db: Db, campaignId: string, ownedOnly: boolean): Promise<void> {
  let q = db.deleteFrom('schedules').where('campaign_id', '=', campaignId);
  if (ownedOnly) q = q.where('campaign_owned', '=', 1);
  await q.execute();
}
