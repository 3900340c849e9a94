/**
 * Layouts' side of the publication workflow (platform/publications.ts): the draft is
 * `layouts.draft`, the publications are `layout_revisions` (their id is the publication id).
 */
import type { AppDeps } from '../../platform/app-deps.js';
import type { Db } from '../../platform/db/database.js';
import { newId } from '../../platform/db/ids.js';
import { storableJson } from '../../platform/db/json.js';
import { ApiError } from '../../platform/http/errors.js';
import { toPage } from '../../platform/http/pagination.js';
import type { Comparable, Publishable, PublicationSummary } from '../../platform/publications.js';
import { contentChanged } from './changes.js';
import { now } from './common.js';
import {
  bumpLayout,
  contentOf,
  getLayoutRow,
  getRevisionRow,
  insertRevision,
  listRevisionRows,
  missingRefs,
  nextRevisionNumber,
  publishedRevision,
  type LayoutContent,
  type RevisionRow,
} from './layouts.repo.js';

function summaryOf(r: RevisionRow): PublicationSummary {
  return {
    id: r.id,
    number: r.number,
    publishedAt: r.created_at,
    publishedBy: r.created_by,
    note: r.note,
    source: r.source as PublicationSummary['source'],
  };
}

async function refusingMissing(db: Db, content: LayoutContent, what: string): Promise<void> {
  const missing = await missingRefs(db, content);
  if (missing.length) throw new ApiError('conflict', `${what} refers to what no longer exists: ${missing.join(', ')}`, { details: { missing } });
}

export const layoutPublishable: Publishable = {
  type: 'layout',

  async state(db, id) {
    const row = await getLayoutRow(db, id);
    const published = await publishedRevision(db, row);
    return {
      name: row.name,
      revision: row.revision,
      draft: contentOf(row.draft),
      published: published ? summaryOf(published) : null,
      unpublishedChanges: !published || published.content !== row.draft,
    };
  },

  async publish(trx, id, snapshot, by, note, source) {
    const row = await getLayoutRow(trx, id);
    const content = snapshot as LayoutContent;
    await refusingMissing(trx, content, 'This layout');
    const t = now();
    const revision: RevisionRow = {
      id: newId(),
      layout_id: id,
      number: await nextRevisionNumber(trx, id),
      content: storableJson(content, 'The layout'),
      note,
      created_by: by,
      created_at: t,
      source,
    };
    await insertRevision(trx, revision);
    await bumpLayout(trx, row, { published_revision_id: revision.id, published_at: t, updated_at: t });
    return summaryOf(revision);
  },

  announce: (deps: AppDeps, id: string) => contentChanged(deps, [{ kind: 'layout', id }]),

  async publications(db, id, page) {
    await getLayoutRow(db, id);
    const rows = await listRevisionRows(db, id, page.cursor, page.limit);
    const p = toPage(rows, page.limit, (r) => r.number);
    return { items: p.items.map(summaryOf), nextCursor: p.nextCursor };
  },

  async publication(db, id, publicationId) {
    const rev = await getRevisionRow(db, id, publicationId);
    return rev ? { summary: summaryOf(rev), snapshot: contentOf(rev.content) } : undefined;
  },

  async restoreDraft(trx, id, snapshot) {
    const row = await getLayoutRow(trx, id);
    const content = snapshot as LayoutContent;
    await refusingMissing(trx, content, 'That publication');
    await bumpLayout(trx, row, { draft: storableJson(content, 'The layout') });
  },

  comparable(snapshot): Comparable {
    const c = snapshot as LayoutContent;
    return {
      fields: { width: c.width, height: c.height, orientation: c.orientation, background: c.background },
      items: c.zones.map((z) => {
        const { id, name, ...fields } = z;
        return { key: id, label: name || (z.content ? `${z.content.type} zone` : 'empty zone'), fields: { name, ...fields } };
      }),
    };
  },
};
