/**
 * What a campaign plays (docs/campaigns.md): the `show` of its released snapshot. Content
 * may not import the campaigns module (it comes later), so it reads the two tables here.
 */
import type { Db } from '../../platform/db/database.js';

export interface ReleasedCampaign {
  id: string;
  name: string;
  /** What the release plays, or null (never released, a release without a show, or its show deleted since). */
  show: { type: 'playlist' | 'layout'; id: string } | null;
}

/** The campaigns named, with the show of their published release. */
export async function releasedCampaigns(db: Db, ids: readonly string[]): Promise<Map<string, ReleasedCampaign>> {
  const out = new Map<string, ReleasedCampaign>();
  if (ids.length === 0) return out;
  const rows = await db
    .selectFrom('campaigns as c')
    .leftJoin('campaign_releases as r', 'r.id', 'c.published_release_id')
    .select(['c.id', 'c.name', 'r.snapshot'])
    .where('c.id', 'in', [...ids])
    .execute();
  for (const r of rows) {
    let show: ReleasedCampaign['show'] = null;
    if (r.snapshot) {
      const s = (JSON.parse(r.snapshot) as { show?: { type?: unknown; id?: unknown } | null }).show;
      if (s && (s.type === 'playlist' || s.type === 'layout') && typeof s.id === 'string') show = { type: s.type, id: s.id };
    }
    if (show) {
      const table = show.type === 'playlist' ? 'playlists' : 'layouts';
      if (!(await db.selectFrom(table).select('id').where('id', '=', show.id).executeTakeFirst())) show = null;
    }
    out.set(r.id, { id: r.id, name: r.name, show });
  }
  return out;
}
