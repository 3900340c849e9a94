/**
 * Widgets' side of the publication workflow (platform/publications.ts, issue 20): the row is
 * what players play (its bundle is built from it), `widgets.draft` the unpublished changes,
 * the publications rows of `content_publications` (snapshots: WidgetSnapshot).
 */
import type { AppDeps } from '../../platform/app-deps.js';
import type { Db } from '../../platform/db/database.js';
import { nowIso } from '../../platform/db/ids.js';
import { ApiError, notFound } from '../../platform/http/errors.js';
import { getPublication, insertPublication, listPublications, type Comparable, type Publishable } from '../../platform/publications.js';
import { existingSourceIds } from '../data-sources/index.js';
import { fireWidgetBundleChange } from './hooks.js';
import { currentWidgetPublication, draftOf, effectiveWidget, fieldsOf, snapshotOfRow, type WidgetSnapshot } from './widgets.edits.js';
import { findWidget, updateWidget, type WidgetRow } from './widgets.repo.js';
import { buildBundle } from './widgets.service.js';

async function rowOf(db: Db, id: string): Promise<WidgetRow> {
  const row = await findWidget(db, id);
  if (!row) throw notFound('Widget');
  return row;
}

async function refusingMissing(db: Db, row: WidgetRow, s: WidgetSnapshot, what: string): Promise<void> {
  const missing: string[] = [];
  if (s.type !== row.type) missing.push(`widget type ${s.type}`);
  if (s.binding && !(await existingSourceIds(db, [s.binding.sourceId])).has(s.binding.sourceId)) missing.push(`data source ${s.binding.sourceId}`);
  if (missing.length) throw new ApiError('conflict', `${what} refers to what no longer exists: ${missing.join(', ')}`, { details: { missing } });
}

const sameContent = (a: WidgetSnapshot, b: WidgetSnapshot) =>
  JSON.stringify([a.settings, a.template, a.binding]) === JSON.stringify([b.settings, b.template, b.binding]);

/** Builds the bundle from the published row and tells the screens using the widget (content's bundle hook). */
async function announceWidget(deps: AppDeps, id: string): Promise<void> {
  try {
    await buildBundle(deps, id);
  } catch (err) {
    deps.logger.error({ err, widgetId: id }, 'could not build a widget bundle');
  }
  await fireWidgetBundleChange(deps, { widgetIds: [id], deleted: false });
}

export const widgetPublishable: Publishable = {
  type: 'widget',

  async state(db, id) {
    const stored = await rowOf(db, id);
    const row = effectiveWidget(stored);
    return {
      name: row.name,
      revision: stored.revision,
      draft: snapshotOfRow(row),
      published: stored.published_at ? await currentWidgetPublication(db, id) : null,
      unpublishedChanges: stored.published_at === null || stored.draft !== null,
    };
  },

  async publish(trx, id, snapshot, by, note, source) {
    const row = await rowOf(trx, id);
    const s = snapshot as WidgetSnapshot;
    await refusingMissing(trx, row, s, 'This widget');
    const contentChanged = !sameContent(s, snapshotOfRow(row));
    const t = nowIso();
    await updateWidget(trx, id, {
      ...fieldsOf(s),
      draft: null,
      published_at: t,
      revision: row.revision + 1,
      content_revision: contentChanged ? row.content_revision + 1 : row.content_revision,
      updated_at: t,
      updated_by: by,
    });
    return insertPublication(trx, { type: 'widget', contentId: id, snapshot: s, note, source, by });
  },

  announce: announceWidget,

  async publications(db, id, page) {
    await rowOf(db, id);
    return listPublications(db, 'widget', id, page);
  },

  publication: (db, id, publicationId) => getPublication(db, 'widget', id, publicationId),

  async restoreDraft(trx, id, snapshot) {
    const row = await rowOf(trx, id);
    const s = snapshot as WidgetSnapshot;
    await refusingMissing(trx, row, s, 'That publication');
    const before = draftOf(row) ?? snapshotOfRow(row);
    await updateWidget(trx, id, {
      draft: JSON.stringify(s),
      revision: row.revision + 1,
      content_revision: sameContent(s, before) ? row.content_revision : row.content_revision + 1,
      updated_at: nowIso(),
    });
  },

  comparable(snapshot): Comparable {
    const s = snapshot as WidgetSnapshot;
    return { fields: { name: s.name, type: s.type, settings: s.settings, template: s.template, binding: s.binding }, items: [] };
  },
};
