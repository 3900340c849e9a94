import type { AppDeps } from '../../platform/app-deps.js';
import { nowIso } from '../../platform/db/ids.js';
import { type Caller, levelsOf } from './access.js';
import { parseJson } from './data-sources.repo.js';
import { fireDataChange } from './hooks.js';
import { allWorkflows, appendEvent, approvalsOf, updateRecord, type Waiting, waitingRecords, windowFlips } from './records.repo.js';
import { recordDto, rebuildLive } from './records.service.js';
import { DEFAULT_WORKFLOW, type Workflow } from './workflow-def.js';
import { isLive, type Taker, waitingOn } from './workflow-run.js';

/**
 * What waits on people and on the clock (issue 18, docs/data-sources.md "Workflow"): the
 * approvals inbox across tables, and the scheduler that opens and closes publishing windows.
 */

/** How often the scheduler looks for windows that opened or closed. */
export const RECORDS_SCHEDULE_TICK_MS = 2_000;

/**
 * GET /approvals: records, across the tables the caller can read, in a state with a
 * transition that waits on them (workflow-run.ts waitingOn) and that they have not approved
 * yet, oldest state change first.
 */
export async function approvalsInbox(deps: AppDeps, caller: Caller, page: { limit: number; cursor?: string }) {
  const db = deps.db;
  const forms = await allWorkflows(db);
  const levels = await levelsOf(
    db,
    caller,
    forms.map((f) => f.source_id),
  );
  const byId = new Map<string, { name: string; workflow: Workflow; taker: Taker }>();
  const waiting: Waiting[] = [];
  for (const f of forms) {
    const workflow = parseJson<Workflow>(f.workflow, DEFAULT_WORKFLOW);
    const taker: Taker = { userId: caller.userId, role: caller.role, level: levels.get(f.source_id) ?? null };
    byId.set(f.source_id, { name: f.name, workflow, taker });
    for (const state of workflow.states) {
      const ts = waitingOn(workflow, state, taker);
      if (ts.length) waiting.push({ sourceId: f.source_id, state, transitions: ts.map((t) => t.name) });
    }
  }
  const found = await waitingRecords(db, caller.userId, waiting, page);
  const approvals = await approvalsOf(
    db,
    found.items.map((r) => r.id),
  );
  return {
    items: found.items.map((r) => {
      const { name, workflow, taker } = byId.get(r.source_id)!;
      const mine = new Set(approvals.filter((a) => a.record_id === r.id && a.user_id === caller.userId).map((a) => a.transition));
      return {
        sourceId: r.source_id,
        sourceName: name,
        record: recordDto(r, approvals, workflow),
        transitions: waitingOn(workflow, r.state, taker)
          .filter((t) => !mine.has(t.name))
          .map((t) => ({ name: t.name, label: t.label ?? null, to: t.to, commentRequired: t.commentRequired, approvals: t.approvals })),
      };
    }),
    nextCursor: found.nextCursor,
  };
}

/**
 * The scheduler's tick (every RECORDS_SCHEDULE_TICK_MS, and once at start): published records
 * whose window opened or closed become live or stop being live, each with a 'scheduled'
 * entry in its trail; each table touched gets its snapshot rebuilt and its outputs told.
 */
export async function scheduleTick(deps: AppDeps, now = Date.now()): Promise<void> {
  const flips = await windowFlips(deps.db, nowIso(now));
  const bySource = new Map<string, typeof flips>();
  for (const f of flips) bySource.set(f.source_id, [...(bySource.get(f.source_id) ?? []), f]);
  for (const [sourceId, records] of bySource) {
    let revision: number | null = null;
    await deps.db.transaction().execute(async (trx) => {
      let changed = false;
      const at = nowIso(now);
      for (const r of records) {
        const live = isLive('published', r.publish_at, r.unpublish_at, now);
        if (!(await updateRecord(trx, r.id, r.revision, { live: live ? 1 : 0 }))) continue; // changed meanwhile: the next tick sees it
        await appendEvent(
          trx,
          sourceId,
          r.id,
          'scheduled',
          { userId: null, tokenId: null },
          { live, publishAt: r.publish_at, unpublishAt: r.unpublish_at },
          at,
        );
        changed = true;
      }
      if (changed) revision = await rebuildLive(trx, sourceId);
    });
    if (revision !== null) await fireDataChange(deps, { sourceId, change: 'data', revision });
  }
}
