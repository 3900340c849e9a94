/**
 * Campaigns' side of the publication workflow (platform/publications.ts): the draft is
 * `campaigns.draft`, the publications are `campaign_releases`; publishing one is a release
 * (campaigns.service.ts), so a submission approved through the publishing module releases it.
 */
import type { Db } from '../../platform/db/database.js';
import type { Comparable, Publishable, PublicationSummary } from '../../platform/publications.js';
import { ApiError, conflict } from '../../platform/http/errors.js';
import { toPage } from '../../platform/http/pagination.js';
import { contentChanged } from '../content/index.js';
import { campaignScheduleScreens } from '../schedules/index.js';
import {
  type CampaignDraft,
  draftOf,
  draftOfSnapshot,
  findCampaignRow,
  getCampaignRow,
  getReleaseRow,
  listReleaseRows,
  type ReleaseRow,
  type ReleaseSnapshot,
} from './campaigns.repo.js';
import { checkDraft, itemsOf, publishedRelease, releaseInTransaction, releaseSummary, unpublishedChanges, writeDraft } from './campaigns.service.js';
import { CONTENT_ADAPTERS } from './registry.js';

/** A snapshot given back: a release's (with `published`) or a draft. */
const asDraft = (snapshot: unknown): CampaignDraft => draftOfSnapshot(snapshot as ReleaseSnapshot);

export const campaignPublishable: Publishable = {
  type: 'campaign',

  async state(db, id) {
    const row = await getCampaignRow(db, id);
    const release = await publishedRelease(db, row);
    return {
      name: row.name,
      revision: row.revision,
      draft: draftOf(row),
      published: release ? releaseSummary(release) : null,
      unpublishedChanges: unpublishedChanges(row, release),
    };
  },

  async publish(trx, id, snapshot, by, note, source): Promise<PublicationSummary> {
    const { release } = await releaseInTransaction(trx, id, asDraft(snapshot), by, note, source);
    return releaseSummary(release);
  },

  async announce(deps, id) {
    const row = await findCampaignRow(deps.db, id);
    if (row) for (const item of itemsOf(draftOf(row))) await CONTENT_ADAPTERS[item.type]?.announce(deps, item.id);
    await contentChanged(deps, [{ kind: 'campaign', id }], await campaignScheduleScreens(deps.db, id));
  },

  async publications(db, id, page) {
    await getCampaignRow(db, id);
    const rows = await listReleaseRows(db, id, page.cursor, page.limit);
    const p = toPage(rows, page.limit, (r) => r.number);
    return { items: p.items.map(releaseSummary), nextCursor: p.nextCursor };
  },

  async publication(db, id, publicationId) {
    const r = await getReleaseRow(db, id, publicationId);
    return r ? { summary: releaseSummary(r), snapshot: JSON.parse(r.snapshot) as unknown } : undefined;
  },

  async restoreDraft(trx, id, snapshot) {
    const row = await getCampaignRow(trx, id);
    const draft = asDraft(snapshot);
    try {
      await checkDraft(trx, draft);
    } catch (err) {
      if (err instanceof ApiError && err.status === 400) throw conflict(`That release refers to what no longer exists: ${err.message}`, err.details);
      throw err;
    }
    await writeDraft(trx, row, draft);
  },

  comparable(snapshot): Comparable {
    const d = asDraft(snapshot);
    return {
      fields: { name: d.name, description: d.description, window: d.window, show: d.show },
      items: [
        ...d.content.map((c) => ({ key: `${c.type}:${c.id}`, label: `${c.type} ${c.id}`, fields: { ...c } })),
        ...d.placements.map((p, i) => ({ key: `placement:${i}`, label: p.name || `placement ${i + 1}`, fields: { ...p } })),
      ],
    };
  },
};

/** Makes a release's draft the draft (409 when it names what no longer exists). */
export async function restoreRelease(db: Db, id: string, release: ReleaseRow): Promise<void> {
  await db.transaction().execute((trx) => campaignPublishable.restoreDraft(trx, id, JSON.parse(release.snapshot) as unknown));
}
