import type { AppDeps } from '../../platform/app-deps.js';
import { ApiError, forbidden, notFound } from '../../platform/http/errors.js';
import type { Publishable } from '../../platform/publications.js';
import { approvalsRequired } from '../system/index.js';
import { compareComparables } from './diff.js';
import { publishableOf } from './publishables.js';
import { announceSafely, type Caller, callerRoleAtLeast, submitRollback } from './submissions.service.js';

/**
 * History (issue 20, docs/publishing.md "History"): an item's publications, compare, restore
 * a publication as the draft, and roll back to one (published at once, or submitted when
 * approvals are on).
 */

export async function publicationsPage(deps: AppDeps, type: string, id: string, page: { cursor?: string | undefined; limit: number }) {
  const adapter = publishableOf(type);
  const state = await adapter.state(deps.db, id);
  const p = await adapter.publications(deps.db, id, page);
  return { items: p.items.map((s) => ({ ...s, current: s.id === state.published?.id })), nextCursor: p.nextCursor };
}

async function publicationOf(deps: AppDeps, adapter: Publishable, id: string, publicationId: string) {
  const found = await adapter.publication(deps.db, id, publicationId);
  if (!found) throw notFound('Publication');
  return found;
}

type Side = 'published' | 'draft' | string;

async function sideOf(deps: AppDeps, adapter: Publishable, id: string, side: Side) {
  if (side === 'draft') {
    const state = await adapter.state(deps.db, id);
    return { kind: 'draft' as const, publication: null, snapshot: state.draft };
  }
  if (side === 'published') {
    const state = await adapter.state(deps.db, id);
    if (!state.published) throw new ApiError('conflict', `"${state.name}" was never published: compare its draft with one of its publications instead`);
    const found = await publicationOf(deps, adapter, id, state.published.id);
    return { kind: 'publication' as const, publication: found.summary, snapshot: found.snapshot };
  }
  const found = await publicationOf(deps, adapter, id, side);
  return { kind: 'publication' as const, publication: found.summary, snapshot: found.snapshot };
}

export async function compare(deps: AppDeps, type: string, id: string, from: Side, to: Side) {
  const adapter = publishableOf(type);
  await adapter.state(deps.db, id); // 404 for an unknown item before anything else
  const a = await sideOf(deps, adapter, id, from);
  const b = await sideOf(deps, adapter, id, to);
  const diff = compareComparables(adapter.comparable(a.snapshot), adapter.comparable(b.snapshot));
  return { from: { kind: a.kind, publication: a.publication }, to: { kind: b.kind, publication: b.publication }, ...diff };
}

export async function restoreDraft(deps: AppDeps, type: string, id: string, publicationId: string) {
  const adapter = publishableOf(type);
  await adapter.state(deps.db, id);
  await deps.db.transaction().execute(async (trx) => {
    const found = await adapter.publication(trx, id, publicationId);
    if (!found) throw notFound('Publication');
    await adapter.restoreDraft(trx, id, found.snapshot);
  });
  const state = await adapter.state(deps.db, id);
  return { type: adapter.type, id, revision: state.revision, unpublishedChanges: state.unpublishedChanges };
}

/**
 * Rollback: approvals off, a publisher publishes the old snapshot as a new publication
 * (source 'rollback') and screens are told (201); approvals on, an editor or above submits
 * it as a pending submission of kind 'rollback' (202).
 */
export async function rollback(
  deps: AppDeps,
  caller: Caller,
  type: string,
  id: string,
  publicationId: string,
  note: string | undefined,
): Promise<{ status: 201; data: { publication: unknown } } | { status: 202; data: { submission: unknown } }> {
  const adapter = publishableOf(type);
  await adapter.state(deps.db, id);
  const found = await publicationOf(deps, adapter, id, publicationId);
  const text = note ?? `Roll back to publication ${found.summary.number}`;
  if (await approvalsRequired(deps.db)) {
    const submission = await submitRollback(deps, caller, adapter, id, found.snapshot, text);
    return { status: 202, data: { submission } };
  }
  if (!callerRoleAtLeast(caller, 'publisher')) {
    throw forbidden('Rolling back publishes at once while approvals are off: it needs the publisher role or above');
  }
  const publication = await deps.db.transaction().execute((trx) => adapter.publish(trx, id, found.snapshot, caller.userId, text, 'rollback'));
  await announceSafely(deps, adapter, id);
  return { status: 201, data: { publication } };
}
