import { api, type Page } from '../../api';
import type { components } from '../../api-schema';
import type { Field, FormDto, Value } from './form-model';

/**
 * Records of a manual table (issue 18, docs/data-sources.md "Records" and "Workflow"): the
 * server's shapes, and words for states and values.
 */

type Schemas = components['schemas'];
export type DataRecord = Schemas['DataRecord'];
export type RecordEvent = Schemas['DataRecordEvent'];
export type RecordDetail = Schemas['DataRecordDetail'];
export type ApprovalItem = Schemas['DataRecordApproval'];

/** A transition as the buttons need it. */
export interface Move {
  name: string;
  label: string | null;
  to: string;
  commentRequired: boolean;
}
export type Workflow = FormDto['workflow'];

/** A state's badge tone: published and live are good news, rejected bad, waiting ones a warning. */
export function stateTone(state: string, live?: boolean): string {
  if (state === 'published') return live === false ? 'warn' : 'ok';
  if (state === 'rejected') return 'bad';
  if (state === 'draft' || state === 'archived') return '';
  return 'warn';
}

/** "submitted" -> "Submitted"; a transition's label or its name as a button's words. */
export const words = (s: string) => s.charAt(0).toUpperCase() + s.slice(1).replace(/_/g, ' ');
export const moveWords = (m: { name: string; label: string | null }) => m.label ?? words(m.name);

/** A value as short text for lists (multi-choice joined, yes/no, empty as a dash). */
export function valueText(field: Field | undefined, value: unknown): string {
  if (value === null || value === undefined || value === '') return '—';
  if (Array.isArray(value)) return value.join(', ');
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (field?.type === 'money' && typeof value === 'number') return `${value.toFixed(field.precision)} ${field.currency}`;
  if (field?.type === 'number' && field.unit) return `${value} ${field.unit}`;
  const text = String(value);
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

/** A record in a few words: its first text-like field's value, else its first value. */
export function titleOf(fields: readonly Field[] | undefined, values: Record<string, unknown>): string {
  const first = fields?.find((f) => (f.type === 'text' || f.type === 'choice') && values[f.key]) ?? fields?.find((f) => values[f.key] !== null);
  if (first) return valueText(first, values[first.key]);
  const any = Object.values(values).find((v) => v !== null && v !== '');
  return any === undefined ? '(empty)' : valueText(undefined, any);
}

/** The workflow's transitions with their comment rule, for those named. */
export function movesOf(workflow: Workflow | undefined, ts: readonly { name: string; label: string | null; to: string }[]): Move[] {
  return ts.map((t) => ({ ...t, commentRequired: workflow?.transitions.find((w) => w.name === t.name)?.commentRequired ?? false }));
}

/** How many things wait on the caller (the nav's badge): one small page is enough to count "20+". */
export async function approvalsCount(): Promise<string> {
  const page = await api.get<Page<ApprovalItem>>('approvals?limit=20');
  return page.items.length === 0 ? '' : page.nextCursor ? '20+' : String(page.items.length);
}

export type { Value };
