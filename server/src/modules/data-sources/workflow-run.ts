import type { Role } from '../../platform/http/auth.js';
import type { AccessLevel } from './access.js';
import { PUBLISHED_STATE, type Workflow } from './workflow-def.js';

/**
 * Running a form's workflow (issue 18, docs/data-sources.md "Workflow"): which transitions a
 * record may take, who may take them, what an edit does to its state, and whether it is live.
 * Pure: the service reads the record, asks here, and writes in one transaction.
 */

export type Transition = Workflow['transitions'][number];

/** The person asking: a console user (role, access level on the source) or an integration token (neither). */
export interface Taker {
  userId: string | null;
  role: Role | null;
  level: AccessLevel | null;
}

/** The state records are archived in: the approvals inbox leaves transitions into it out. */
export const ARCHIVED_STATE = 'archived';

const fromOf = (t: Transition): string[] => (Array.isArray(t.from) ? t.from : [t.from]);

/** The transitions that leave `state`, in the definition's order. */
export const transitionsFrom = (wf: Workflow, state: string): Transition[] => wf.transitions.filter((t) => fromOf(t).includes(state));

/** Whether the taker matches the transition's `who` (any of roles, access grants, named users). */
export function mayTake(t: Transition, taker: Taker): boolean {
  const who = t.who;
  if (taker.role && who.roles?.includes(taker.role)) return true;
  if (taker.level && who.grants?.includes(taker.level)) return true;
  if (taker.userId && who.userIds?.includes(taker.userId)) return true;
  return false;
}

export type Decision =
  | { kind: 'unknown'; names: string[] }
  | { kind: 'not_from_here'; allowed: string[] }
  | { kind: 'forbidden' }
  | { kind: 'comment_required' }
  | { kind: 'already_approved' }
  | { kind: 'approval'; transition: Transition; count: number; needed: number }
  | { kind: 'move'; transition: Transition; to: string };

/**
 * What taking `name` from `state` does. `approvedBy`: the people who already approved this
 * transition of the record (for a transition that needs N > 1 distinct people). Checks in
 * order: known name (400), allowed from the state (409), who (403), comment (400), the same
 * person twice (409); then either one more approval or the move.
 */
export function decide(wf: Workflow, state: string, name: string, taker: Taker, comment: string | undefined, approvedBy: readonly string[]): Decision {
  const t = wf.transitions.find((x) => x.name === name);
  if (!t) return { kind: 'unknown', names: wf.transitions.map((x) => x.name) };
  if (!fromOf(t).includes(state)) return { kind: 'not_from_here', allowed: transitionsFrom(wf, state).map((x) => x.name) };
  if (!mayTake(t, taker)) return { kind: 'forbidden' };
  if (t.commentRequired && !comment?.trim()) return { kind: 'comment_required' };
  if (t.approvals <= 1) return { kind: 'move', transition: t, to: t.to };
  if (!taker.userId) return { kind: 'forbidden' }; // approvals are people's
  if (approvedBy.includes(taker.userId)) return { kind: 'already_approved' };
  const count = approvedBy.length + 1;
  return count >= t.approvals ? { kind: 'move', transition: t, to: t.to } : { kind: 'approval', transition: t, count, needed: t.approvals };
}

/** A record in `state` is live (the outputs show it) when published and inside its window. */
export function isLive(state: string, publishAt: string | null, unpublishAt: string | null, now = Date.now()): boolean {
  if (state !== PUBLISHED_STATE) return false;
  if (publishAt && Date.parse(publishAt) > now) return false;
  if (unpublishAt && Date.parse(unpublishAt) <= now) return false;
  return true;
}

/** The states an edit sends back: 'published' and those one transition away from it (e.g. 'approved'), the initial state aside. */
function reviewedStates(wf: Workflow): Set<string> {
  const out = new Set([PUBLISHED_STATE]);
  for (const t of wf.transitions) if (t.to === PUBLISHED_STATE) for (const s of fromOf(t)) if (s !== wf.initial) out.add(s);
  return out;
}

/**
 * The state a record is in after an edit of its values (docs "Workflow"): a record someone
 * reviewed (published, or one step before, like 'approved') goes back to the initial state,
 * unless the editor could publish it alone (matches a transition into 'published' that needs
 * one person). Other states are kept: a submitted record is reviewed with its new values.
 */
export function stateAfterEdit(wf: Workflow, state: string, taker: Taker): string {
  if (!reviewedStates(wf).has(state)) return state;
  const publisher = wf.transitions.some((t) => t.to === PUBLISHED_STATE && t.approvals <= 1 && mayTake(t, taker));
  return publisher ? state : wf.initial;
}

/**
 * The transitions of `state` that wait on the taker (the approvals inbox): ones they may
 * take, leading neither back to the initial state nor to 'archived' (those are an editor's
 * housekeeping, not something waiting on a reviewer). A record in the initial state waits on
 * nobody: its author is still writing it.
 */
export function waitingOn(wf: Workflow, state: string, taker: Taker): Transition[] {
  if (state === wf.initial) return [];
  return transitionsFrom(wf, state).filter((t) => t.to !== wf.initial && t.to !== ARCHIVED_STATE && mayTake(t, taker));
}
