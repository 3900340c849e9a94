import { useState } from 'preact/hooks';
import { api, type Page } from '../api';
import { ErrorNote, formatTime, Notice, useLoad, useTitle } from '../ui';
import { ContentSubmissions } from './approvals-content';
import type { FormDto } from './data/form-model';
import { type ApprovalItem, stateTone, titleOf, valueText, words } from './data/records-model';
import { TransitionActions } from './data/transitions';

/**
 * Approvals (issue 18): records across tables waiting on the signed-in person (GET
 * /approvals: a transition they may take and have not approved yet), oldest first. Each
 * with its values, how many approvals it has, and the transitions as buttons (approve,
 * reject with a comment, publish...). Everyone sees the page; it is empty for most.
 * Below, content submissions (issue 20, approvals-content.tsx).
 */
export function ApprovalsPage() {
  useTitle('Approvals');
  const list = useLoad(() => api.get<Page<ApprovalItem>>('approvals?limit=100'));
  const [said, setSaid] = useState<string | null>(null);
  // Field labels per table (the published form), fetched once per table shown.
  const sourceIds = [...new Set((list.data?.items ?? []).map((i) => i.sourceId))];
  const forms = useLoad(
    async () =>
      Object.fromEntries(await Promise.all(sourceIds.map(async (id) => [id, await api.get<FormDto>(`data-sources/${id}/form`).catch(() => null)] as const))),
    [sourceIds.join(',')],
  );
  const items = list.data?.items ?? [];
  return (
    <>
      <hgroup>
        <h1>Approvals</h1>
        <p>Table entries and content waiting on a decision.</p>
      </hgroup>
      <h2>Table entries</h2>
      <ErrorNote error={list.error} />
      {said && <Notice>{said}</Notice>}
      {list.data && items.length === 0 && <p class="muted">Nothing waits on you.</p>}
      <ul class="approvals" aria-label="Waiting on you">
        {items.map((item) => {
          const form = forms.data?.[item.sourceId] ?? undefined;
          const fields = form?.published?.fields ?? [];
          const r = item.record;
          const title = titleOf(fields, r.values);
          return (
            <li key={r.id} data-record={r.id}>
              <article aria-label={`${title} in ${item.sourceName}`}>
                <header>
                  <strong>{title}</strong> <span class={`badge ${stateTone(r.state, r.live)}`}>{words(r.state)}</span>{' '}
                  <small class="muted">
                    in <a href={`/data/${item.sourceId}?record=${r.id}`}>{item.sourceName}</a> · since {formatTime(r.stateChangedAt ?? r.updatedAt)}
                  </small>
                </header>
                <dl class="record-values">
                  {(fields.length ? fields.map((f) => [f.key, f.label, f] as const) : Object.keys(r.values).map((k) => [k, k, undefined] as const)).map(
                    ([key, label, f]) => (
                      <div key={key}>
                        <dt>{label}</dt>
                        <dd>{valueText(f, r.values[key])}</dd>
                      </div>
                    ),
                  )}
                </dl>
                {(r.pendingApprovals ?? []).map((p) => (
                  <p key={p.transition} class="muted">
                    {words(p.transition)}: {p.userIds.length} of {p.needed} approvals so far.
                  </p>
                ))}
                <TransitionActions
                  record={r}
                  moves={item.transitions}
                  label={`Decide on ${title}`}
                  onDone={(next, move) => {
                    setSaid(`${title}: ${words(move.name).toLowerCase()}, now ${words(next.state).toLowerCase()}.`);
                    void list.reload();
                  }}
                />
              </article>
            </li>
          );
        })}
      </ul>
      <ContentSubmissions />
    </>
  );
}
