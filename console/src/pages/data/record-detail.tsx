import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from '../../api';
import { ErrorNote, formatTime, Notice, useAction, useLoad } from '../../ui';
import { confirmAction, showToast } from '../../ui/confirm';
import { Field as FieldBox } from '../../ui/fields';
import { type FormDto, problemsOf, type Values } from './form-model';
import { RecordForm } from './record-form';
import { type DataRecord, movesOf, type RecordDetail, type RecordEvent, stateTone, titleOf, valueText, words } from './records-model';
import { TransitionActions } from './transitions';
import { Attachments } from './record-attachments';
import { isWindowError, type WindowDraft, WindowFields, windowBody, windowOf } from './record-window';

/**
 * One record (issue 18): its values in the entry form (editors save with If-Match; a 412
 * offers a reload), the workflow transitions the caller may take from its state, pending
 * approvals, its publishing window, its attachments, and its history (the audit trail,
 * comments included), newest last. Editors delete it (confirmed, If-Match).
 */
export function RecordPanel({
  form,
  recordId,
  onChanged,
  onClose,
  onDeleted,
}: {
  form: FormDto;
  recordId: string;
  onChanged: () => void;
  onClose: () => void;
  onDeleted: () => void;
}) {
  const fields = form.published?.fields ?? [];
  const detail = useLoad(() => api.get<RecordDetail>(`data-sources/${form.sourceId}/records/${recordId}`), [form.sourceId, recordId]);
  const r = detail.data;
  const [values, setValues] = useState<Values>({});
  const [span, setSpan] = useState<WindowDraft>(() => windowOf());
  const [said, setSaid] = useState<string | null>(null);
  useEffect(() => {
    if (!r) return;
    setValues(r.values as Values);
    setSpan(windowOf(r));
  }, [r]);
  const save = useAction(async () => {
    if (Object.keys(problemsOf(fields, values)).length > 0) throw new Error('Some values do not fit the form: see the fields.');
    await api.patch<DataRecord>(
      `data-sources/${form.sourceId}/records/${recordId}`,
      { values, ...windowBody(span, windowOf(r!)) },
      { headers: { 'if-match': `"${r!.revision}"` } },
    );
    await detail.reload();
    setSaid('Saved.');
    onChanged();
  });
  const remove = useAction(async () => {
    const name = titleOf(fields, r!.values);
    const yes = await confirmAction({
      title: `Delete the record “${name}”?`,
      body: <p>It leaves the table (and the screens, if they show it) with its attachments; its history is kept. This cannot be undone.</p>,
      confirmLabel: 'Delete the record',
      danger: true,
    });
    if (!yes) return;
    try {
      await api.del(`data-sources/${form.sourceId}/records/${recordId}`, { headers: { 'if-match': `"${r!.revision}"` } });
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 412)) throw err;
      await detail.reload();
      throw new Error(
        'Someone changed this record meanwhile, so it was not deleted. It is reloaded: look at their change, then delete it again if you still mean to.',
      );
    }
    showToast(`Deleted “${name}”.`);
    onDeleted();
  });
  if (detail.error && !r) return <ErrorNote error={detail.error} />;
  if (!r) return <p aria-busy="true">Loading the record…</p>;
  const title = titleOf(fields, r.values);
  const canEdit = form.myAccess !== 'viewer';
  const stale = save.error instanceof ApiError && save.error.status === 412;
  const moves = movesOf(
    form.workflow,
    r.transitions.filter((t) => t.mayTake),
  );
  return (
    <article class="record-panel" aria-labelledby="record-h" data-testid="record" data-state={r.state}>
      <header class="row">
        <h3 id="record-h">
          {title} <span class={`badge ${stateTone(r.state, r.live)}`}>{words(r.state)}</span>
          {r.live && <span class="badge ok">on screens</span>}
        </h3>
        <button type="button" class="secondary outline small" onClick={onClose}>
          Close
        </button>
      </header>
      {(r.pendingApprovals ?? []).map((p) => (
        <p key={p.transition} class="muted">
          {words(p.transition)}: {p.userIds.length} of {p.needed} approvals so far.
        </p>
      ))}
      <form
        aria-label={`Values of ${title}`}
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void save.run();
        }}
      >
        <RecordForm fields={fields} values={values} onChange={setValues} error={save.error} disabled={!canEdit} />
        <WindowFields value={span} onChange={setSpan} error={save.error} disabled={!canEdit} />
        {stale ? (
          <div class="error-note" role="alert" data-code="version_conflict">
            <p>Someone changed this record meanwhile. Reload it to see their change (yours here are dropped), then apply yours again.</p>
            <button type="button" class="secondary" onClick={() => void detail.reload().then(() => save.setError(null))}>
              Reload the record
            </button>
          </div>
        ) : (
          <ErrorNote error={isWindowError(save.error) ? null : save.error} />
        )}
        {said && !save.error && <Notice>{said}</Notice>}
        {canEdit && (
          <button type="submit" aria-busy={save.busy} disabled={save.busy}>
            Save the record
          </button>
        )}
      </form>
      <TransitionActions
        record={r}
        moves={moves}
        label={`Workflow of ${title}`}
        onDone={(next, move) => {
          setSaid(`${words(move.name)}: now ${words(next.state).toLowerCase()}.`);
          void detail.reload();
          onChanged();
        }}
      />
      <Attachments
        path={`data-sources/${form.sourceId}/records/${recordId}/attachments`}
        items={r.attachments}
        canEdit={canEdit}
        onChanged={() => {
          void detail.reload();
          onChanged();
        }}
      />
      <History events={r.history} form={form} />
      <CommentBox
        path={`data-sources/${form.sourceId}/records/${recordId}/comments`}
        onAdded={() => {
          void detail.reload();
          onChanged();
        }}
      />
      {canEdit && (
        <div class="record-delete">
          <ErrorNote error={remove.error} />
          <button type="button" class="secondary outline" aria-busy={remove.busy} disabled={remove.busy} onClick={() => void remove.run()}>
            Delete the record
          </button>
        </div>
      )}
    </article>
  );
}

const when = (v: unknown) => (typeof v === 'string' ? formatTime(v) : 'no bound');

/** The audit trail in words, oldest first. */
function History({ events, form }: { events: RecordEvent[]; form: FormDto }) {
  const fields = form.published?.fields ?? [];
  const labelOf = (key: string) => fields.find((f) => f.key === key)?.label ?? key;
  const what = (e: RecordEvent): string => {
    const d = e.data as Record<string, unknown>;
    switch (e.kind) {
      case 'created':
        return `added it (${words(String(d.state ?? '')).toLowerCase()})`;
      case 'updated': {
        const changes = Object.entries((d.changes ?? {}) as Record<string, { from: unknown; to: unknown }>).map(
          ([k, c]) => `${labelOf(k)}: ${valueText(undefined, c.from)} → ${valueText(undefined, c.to)}`,
        );
        if (d.publishAt) changes.push(`shown from: ${when((d.publishAt as { to: unknown }).to)}`);
        if (d.unpublishAt) changes.push(`shown until: ${when((d.unpublishAt as { to: unknown }).to)}`);
        return `changed ${changes.join('; ') || 'it'}`;
      }
      case 'transition':
        return `${words(String(d.transition)).toLowerCase()}: ${words(String(d.from)).toLowerCase()} → ${words(String(d.to)).toLowerCase()}`;
      case 'approval':
        return `approved toward ${String(d.transition)} (${String(d.count)} of ${String(d.needed)})`;
      case 'comment':
        return 'commented';
      case 'scheduled':
        return d.live ? 'went on screens (its window opened)' : 'left the screens (its window)';
      case 'deleted':
        return 'deleted it';
      case 'attachment_added':
        return `attached ${String(d.fileName ?? 'a file')}`;
      case 'attachment_removed':
        return `removed the attachment ${String(d.fileName ?? '')}`.trim();
      default:
        return e.kind.replace(/_/g, ' ');
    }
  };
  return (
    <section aria-label="History" data-testid="record-history">
      <h4>History</h4>
      <ol class="record-history">
        {events.map((e) => {
          const comment = e.kind === 'comment' ? (e.data as { body?: unknown }).body : (e.data as { comment?: unknown }).comment;
          return (
            <li key={e.id} data-kind={e.kind}>
              <time dateTime={e.at}>{formatTime(e.at)}</time> · <strong>{e.userName ?? (e.tokenId ? 'an integration token' : 'Placard')}</strong> {what(e)}
              {typeof comment === 'string' && comment && <blockquote>{comment}</blockquote>}
            </li>
          );
        })}
      </ol>
    </section>
  );
}

/** A comment on the record (anyone who may read the table): it goes into the history. */
function CommentBox({ path, onAdded }: { path: string; onAdded: () => void }) {
  const [body, setBody] = useState('');
  const add = useAction(async () => {
    await api.post(path, { body });
    setBody('');
    onAdded();
  });
  return (
    <form
      aria-label="Add a comment"
      onSubmit={(e) => {
        e.preventDefault();
        void add.run();
      }}
    >
      <FieldBox label="Add a comment" error={add.error instanceof ApiError ? add.error.fieldMessage('body') : undefined}>
        {(p) => <textarea {...p} rows={2} required value={body} onInput={(e) => setBody(e.currentTarget.value)} />}
      </FieldBox>
      <ErrorNote error={add.error instanceof ApiError && add.error.fieldMessage('body') ? null : add.error} />
      <button type="submit" class="secondary" aria-busy={add.busy} disabled={add.busy}>
        Comment
      </button>
    </form>
  );
}
