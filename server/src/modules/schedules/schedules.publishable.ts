/**
 * Schedules' side of the publication workflow (platform/publications.ts, issue 20): the row
 * and its targets are what screens play, `schedules.draft` the unpublished changes, the
 * publications are rows of `content_publications` (snapshots: ScheduleSnapshot).
 */
import { nowIso } from '../../platform/db/ids.js';
import type { Db } from '../../platform/db/database.js';
import { ApiError } from '../../platform/http/errors.js';
import { getPublication, insertPublication, listPublications, type Comparable, type Publishable } from '../../platform/publications.js';
import { effectiveSchedule, fieldsOf, getScheduleRow, missingOf, snapshotOf, updateAtRevision, writeTargets, type ScheduleSnapshot } from './schedules.repo.js';
import { announceSchedule, currentPublication } from './schedules.service.js';

async function refusingMissing(db: Db, snapshot: ScheduleSnapshot, what: string): Promise<void> {
  const missing = await missingOf(db, snapshot);
  if (missing.length) throw new ApiError('conflict', `${what} refers to what no longer exists: ${missing.join(', ')}`, { details: { missing } });
}

function changedMeanwhile(): ApiError {
  return new ApiError('conflict', 'This schedule was changed meanwhile; try again');
}

export const schedulePublishable: Publishable = {
  type: 'schedule',

  async state(db, id) {
    const stored = await getScheduleRow(db, id);
    const { row, targets } = await effectiveSchedule(db, stored);
    return {
      name: row.name,
      revision: stored.revision,
      draft: snapshotOf(row, targets),
      published: stored.published_at ? await currentPublication(db, id) : null,
      unpublishedChanges: stored.published_at === null || stored.draft !== null,
    };
  },

  async publish(trx, id, snapshot, by, note, source) {
    const row = await getScheduleRow(trx, id);
    const s = snapshot as ScheduleSnapshot;
    await refusingMissing(trx, s, 'This schedule');
    if (!(await updateAtRevision(trx, row, { ...fieldsOf(s), draft: null, published_at: nowIso() }))) throw changedMeanwhile();
    await writeTargets(trx, id, s.targets);
    return insertPublication(trx, { type: 'schedule', contentId: id, snapshot: s, note, source, by });
  },

  announce: announceSchedule,

  async publications(db, id, page) {
    await getScheduleRow(db, id);
    return listPublications(db, 'schedule', id, page);
  },

  publication: (db, id, publicationId) => getPublication(db, 'schedule', id, publicationId),

  async restoreDraft(trx, id, snapshot) {
    const row = await getScheduleRow(trx, id);
    const s = snapshot as ScheduleSnapshot;
    await refusingMissing(trx, s, 'That publication');
    if (!(await updateAtRevision(trx, row, { draft: JSON.stringify(s) }))) throw changedMeanwhile();
  },

  comparable(snapshot): Comparable {
    const { targets, ...fields } = snapshot as ScheduleSnapshot;
    const items = (['screen', 'group', 'location'] as const).flatMap((kind) =>
      targets[`${kind}Ids`].map((id) => ({ key: `${kind}:${id}`, label: `${kind} ${id}`, fields: {} })),
    );
    return { fields: { ...fields }, items };
  },
};
