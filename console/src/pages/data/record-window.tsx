import { ApiError } from '../../api';
import { Field as FieldBox } from '../../ui/fields';

/**
 * A record's publishing window (issue 18, docs/data-sources.md "Workflow"): "Show from" and
 * "Show until" as datetime-local inputs read in the browser's time zone (the label names it),
 * sent to the server as ISO instants (publishAt / unpublishAt; empty = no bound).
 */

/** The two inputs' values as typed: "YYYY-MM-DDTHH:MM" in the browser's zone, or "". */
export interface WindowDraft {
  publishAt: string;
  unpublishAt: string;
}

export const browserZone = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone || 'local time';

const pad = (n: number) => String(n).padStart(2, '0');

/** An instant as a datetime-local value in the browser's zone ("" for none). */
export function toLocalInput(iso: string | null | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** A datetime-local value (read in the browser's zone) as an ISO instant; null when empty. */
export function fromLocalInput(local: string): string | null {
  if (!local) return null;
  const d = new Date(local);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

export const windowOf = (r?: { publishAt: string | null; unpublishAt: string | null }): WindowDraft => ({
  publishAt: toLocalInput(r?.publishAt),
  unpublishAt: toLocalInput(r?.unpublishAt),
});

/** The body's window fields: all of them on create; on an edit only those changed from `was` (seconds are not lost). */
export function windowBody(draft: WindowDraft, was?: WindowDraft): { publishAt?: string | null; unpublishAt?: string | null } {
  const out: { publishAt?: string | null; unpublishAt?: string | null } = {};
  if (!was || draft.publishAt !== was.publishAt) out.publishAt = fromLocalInput(draft.publishAt);
  if (!was || draft.unpublishAt !== was.unpublishAt) out.unpublishAt = fromLocalInput(draft.unpublishAt);
  return out;
}

/** True when the error is the server's word on the window (shown under its fields, not again below). */
export const isWindowError = (error: unknown) => error instanceof ApiError && Boolean(error.fieldMessage('publishAt') || error.fieldMessage('unpublishAt'));

/** Where a published record stands against its window now: "scheduled" (not yet), "ended", or null (inside it or not published). */
export function windowHint(r: { state: string; live: boolean; publishAt: string | null; unpublishAt: string | null }, now = Date.now()): string | null {
  if (r.state !== 'published' || r.live) return null;
  if (r.unpublishAt && Date.parse(r.unpublishAt) <= now) return 'ended';
  if (r.publishAt && Date.parse(r.publishAt) > now) return 'scheduled';
  return null;
}

export function WindowFields({
  value,
  onChange,
  error,
  disabled,
}: {
  value: WindowDraft;
  onChange: (next: WindowDraft) => void;
  error: unknown;
  disabled?: boolean;
}) {
  const zone = browserZone();
  const said = (field: string) => (error instanceof ApiError ? error.fieldMessage(field) : undefined);
  return (
    <fieldset class="grid record-window">
      <legend>When screens show it once published</legend>
      <FieldBox label={`Show from (${zone})`} help="Empty: as soon as it is published." error={said('publishAt')}>
        {(p) => (
          <input
            {...p}
            type="datetime-local"
            disabled={disabled}
            value={value.publishAt}
            onInput={(e) => onChange({ ...value, publishAt: e.currentTarget.value })}
          />
        )}
      </FieldBox>
      <FieldBox label={`Show until (${zone})`} help="Empty: no end." error={said('unpublishAt')}>
        {(p) => (
          <input
            {...p}
            type="datetime-local"
            disabled={disabled}
            value={value.unpublishAt}
            onInput={(e) => onChange({ ...value, unpublishAt: e.currentTarget.value })}
          />
        )}
      </FieldBox>
    </fieldset>
  );
}
