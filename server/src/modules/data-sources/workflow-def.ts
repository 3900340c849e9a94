import { z } from 'zod';
import { ROLES } from '../../platform/http/auth.js';
import { ACCESS_LEVELS } from './access.js';

/**
 * A form's workflow definition (issue 18, docs/data-sources.md "Forms"): the states a record
 * goes through and the transitions between them. Pure. This step stores and checks the
 * definition; nothing executes it yet (records come next).
 */

/** The state whose records reach the table's rows and so the screens. */
export const PUBLISHED_STATE = 'published';

const stateName = z.string().regex(/^[a-z][a-z0-9_]{0,39}$/, 'lowercase letters, digits or _, starting with a letter (at most 40)');

export const TransitionSchema = z
  .object({
    name: z.string().regex(/^[a-z][a-zA-Z0-9_]{0,39}$/, 'a lowercase letter, then letters, digits or _ (at most 40)'),
    label: z.string().trim().min(1).max(100).optional(),
    from: z.union([stateName, z.array(stateName).min(1).max(50)]).describe('The state or states it leaves'),
    to: stateName,
    who: z
      .object({
        roles: z.array(z.enum(ROLES)).max(ROLES.length).optional().describe('Server roles that may take it'),
        grants: z.array(z.enum(ACCESS_LEVELS)).max(ACCESS_LEVELS.length).optional().describe('Access levels on the source that may take it'),
        userIds: z.array(z.uuid()).max(100).optional().describe('Named users (approvers) who may take it'),
      })
      .describe('Who may take it: anyone who matches one of the lists'),
    commentRequired: z.boolean().default(false),
    approvals: z.number().int().default(1).describe('How many distinct people must take it before the record moves (1: the first one moves it)'),
  })
  .meta({ id: 'FormTransition' });

export const WorkflowSchema = z
  .object({
    states: z.array(stateName).min(1).max(50).describe(`The states; "${PUBLISHED_STATE}" is the one screens show`),
    initial: stateName.default('draft').describe('The state a new record starts in'),
    transitions: z.array(TransitionSchema).max(200),
  })
  .superRefine((wf, ctx) => {
    for (const issue of workflowProblems(wf)) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  })
  .meta({ id: 'FormWorkflow' });
export type Workflow = z.output<typeof WorkflowSchema>;
type WorkflowInput = Omit<Workflow, 'transitions'> & { transitions: z.output<typeof TransitionSchema>[] };

export interface WorkflowIssue {
  path: (string | number)[];
  message: string;
}

const fromOf = (from: string | string[]) => (Array.isArray(from) ? from : [from]);

/** Every mistake of a definition: unknown or unreachable states, duplicate names, N < 1, no way to 'published'. */
export function workflowProblems(wf: WorkflowInput): WorkflowIssue[] {
  const out: WorkflowIssue[] = [];
  const states = new Set<string>();
  for (const [i, s] of wf.states.entries()) {
    if (states.has(s)) out.push({ path: ['states', i], message: `The state "${s}" is listed twice` });
    states.add(s);
  }
  if (!states.has(PUBLISHED_STATE)) out.push({ path: ['states'], message: `There must be a "${PUBLISHED_STATE}" state: it is what screens show` });
  if (!states.has(wf.initial)) out.push({ path: ['initial'], message: `"${wf.initial}" is not one of the states` });
  const names = new Set<string>();
  for (const [i, t] of wf.transitions.entries()) {
    if (names.has(t.name)) out.push({ path: ['transitions', i, 'name'], message: `Two transitions are named "${t.name}"` });
    names.add(t.name);
    for (const [j, s] of fromOf(t.from).entries())
      if (!states.has(s)) out.push({ path: ['transitions', i, 'from', ...(Array.isArray(t.from) ? [j] : [])], message: `"${s}" is not one of the states` });
    if (!states.has(t.to)) out.push({ path: ['transitions', i, 'to'], message: `"${t.to}" is not one of the states` });
    if (t.approvals < 1) out.push({ path: ['transitions', i, 'approvals'], message: 'At least 1 approval (1: the first person to take it moves the record)' });
    const who = t.who;
    if (!who.roles?.length && !who.grants?.length && !who.userIds?.length)
      out.push({ path: ['transitions', i, 'who'], message: 'Names nobody: give roles, grants or userIds' });
  }
  if (out.length) return out;
  // Every state is reachable from the initial one, and 'published' among them.
  const reached = new Set([wf.initial]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const t of wf.transitions) {
      if (!reached.has(t.to) && fromOf(t.from).some((s) => reached.has(s))) {
        reached.add(t.to);
        grew = true;
      }
    }
  }
  if (!reached.has(PUBLISHED_STATE))
    out.push({ path: ['transitions'], message: `No way leads from "${wf.initial}" to "${PUBLISHED_STATE}": records could never reach the screens` });
  for (const [i, s] of wf.states.entries())
    if (!reached.has(s) && s !== PUBLISHED_STATE) out.push({ path: ['states', i], message: `No transition leads from "${wf.initial}" to "${s}"` });
  return out;
}

const EDITORS = { grants: ['editor', 'owner'] as ('editor' | 'owner')[] };
const APPROVERS = { roles: ['owner', 'admin', 'publisher'] as ('owner' | 'admin' | 'publisher')[] };

/** The workflow a form starts with: draft -> submitted -> approved -> published, plus rejected and archived. */
export const DEFAULT_WORKFLOW: Workflow = {
  states: ['draft', 'submitted', 'approved', 'published', 'rejected', 'archived'],
  initial: 'draft',
  transitions: [
    { name: 'submit', from: 'draft', to: 'submitted', who: EDITORS, commentRequired: false, approvals: 1 },
    { name: 'approve', from: 'submitted', to: 'approved', who: APPROVERS, commentRequired: false, approvals: 1 },
    { name: 'reject', from: ['submitted', 'approved'], to: 'rejected', who: APPROVERS, commentRequired: true, approvals: 1 },
    { name: 'publish', from: 'approved', to: 'published', who: APPROVERS, commentRequired: false, approvals: 1 },
    { name: 'revise', from: 'rejected', to: 'draft', who: EDITORS, commentRequired: false, approvals: 1 },
    { name: 'archive', from: ['draft', 'published', 'rejected'], to: 'archived', who: EDITORS, commentRequired: false, approvals: 1 },
    { name: 'restore', from: 'archived', to: 'draft', who: EDITORS, commentRequired: false, approvals: 1 },
  ],
};
