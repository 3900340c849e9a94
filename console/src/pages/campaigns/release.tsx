import { useEffect, useState } from 'preact/hooks';
import { api, type Page } from '../../api';
import { ErrorNote, formatTime, Notice, useAction, useLoad, useSession } from '../../ui';
import { confirmAction } from '../../ui/confirm';
import { SubmitForApproval } from '../../ui/publishing';
import { type Campaign, type CampaignRelease, concerns, type Draft, explain, type Finding, findingWords, type Lists, type Preflight } from './model';

type Loaded<T> = { data: T | undefined; error: unknown; loading: boolean; reload: () => Promise<void> };

/** The preflight checklist: errors (a release would fail or play nothing) and warnings, each with what it concerns. */
export function PreflightPanel({ preflight, lists, draft }: { preflight: Loaded<Preflight>; lists: Lists; draft: Draft }) {
  const p = preflight.data;
  const group = (title: string, kind: 'error' | 'warning', findings: Finding[]) => (
    <section aria-labelledby={`preflight-${kind}s`} data-testid={`preflight-${kind}s`}>
      <h3 id={`preflight-${kind}s`}>
        {title} ({findings.length})
      </h3>
      <ul class={`findings ${kind}`}>
        {findings.map((f, n) => (
          <li key={n} data-code={f.code}>
            <span class={`badge ${kind === 'error' ? 'bad' : 'warn'}`}>{kind === 'error' ? 'Blocks publishing' : 'Check'}</span>{' '}
            <strong>{concerns(f, lists, draft)}:</strong> {findingWords(f)}
          </li>
        ))}
      </ul>
    </section>
  );
  return (
    <article aria-labelledby="preflight-h" aria-busy={preflight.loading}>
      <header class="row spread">
        <h2 id="preflight-h">Preflight checklist</h2>
        <button type="button" class="secondary outline small" onClick={() => void preflight.reload()}>
          Check again
        </button>
      </header>
      <ErrorNote error={preflight.error} />
      {p && p.errors.length === 0 && <p data-testid="preflight-clean">Nothing blocks publishing the saved draft.</p>}
      {p && p.errors.length > 0 && group('Errors', 'error', p.errors)}
      {p && p.warnings.length > 0 && group('Warnings', 'warning', p.warnings)}
    </article>
  );
}

/** Publish (approvals off) or, with approvals on, the way to ask for it; disabled with the reason while the checklist has errors. */
export function PublishPanel({
  campaign,
  preflight,
  approvalsRequired,
  canPublish,
  unsaved,
  onPublished,
}: {
  campaign: Campaign;
  preflight: Preflight | undefined;
  approvalsRequired: boolean;
  canPublish: boolean;
  unsaved: boolean;
  onPublished: () => Promise<void>;
}) {
  const [note, setNote] = useState('');
  const [done, setDone] = useState<string | null>(null);
  const publish = useAction(async () => {
    const yes = await confirmAction({
      title: `Publish “${campaign.name}”?`,
      body: (
        <p>
          Its content with unpublished changes is published and its placements are scheduled, all at once: screens it is placed on switch within seconds while
          its window is open.
        </p>
      ),
      confirmLabel: 'Publish',
    });
    if (!yes) return;
    try {
      const r = await api.post<CampaignRelease>(`campaigns/${campaign.id}/publish`, note.trim() ? { note: note.trim() } : {});
      setDone(`Published release ${r.number}; its screens update now.`);
      setNote('');
    } catch (err) {
      throw explain(err, 'publish');
    }
    await onPublished();
  });
  const errors = preflight?.errors.length ?? 0;
  const why = !preflight
    ? 'The checklist has not run yet.'
    : errors > 0
      ? `Fix the ${errors === 1 ? 'error' : `${errors} errors`} in the checklist first.`
      : !canPublish
        ? 'Publishing needs the publisher role.'
        : unsaved
          ? 'Save the draft first: Publish releases the saved draft and its checklist.'
          : '';
  if (approvalsRequired) {
    // Submitting is for editors too; what blocks a release blocks the submission.
    const blocked = !preflight
      ? 'The checklist has not run yet.'
      : errors > 0
        ? why
        : unsaved
          ? 'Save the draft first: the saved draft is what is submitted.'
          : '';
    return (
      <article aria-labelledby="publish-h">
        <h2 id="publish-h">Publish</h2>
        <p>Approvals are on: a publisher approves the campaign before it is released.</p>
        {blocked ? <p data-testid="publish-why">{blocked}</p> : <SubmitForApproval type="campaign" id={campaign.id} onDone={() => void onPublished()} />}
      </article>
    );
  }
  return (
    <article aria-labelledby="publish-h">
      <h2 id="publish-h">Publish</h2>
      <p class="muted">Publishing releases the saved draft: its content with unpublished changes is published and its placements are scheduled, all at once.</p>
      <label>
        Release note
        <input value={note} maxLength={500} placeholder="optional, e.g. spring prices" onInput={(e) => setNote(e.currentTarget.value)} />
      </label>
      <ErrorNote error={publish.error} />
      {done && <Notice>{done}</Notice>}
      <button
        type="button"
        disabled={Boolean(why)}
        aria-describedby={why ? 'publish-why' : undefined}
        aria-busy={publish.busy}
        onClick={() => void publish.run()}
      >
        Publish
      </button>
      {why && (
        <small id="publish-why" data-testid="publish-why">
          {why}
        </small>
      )}
    </article>
  );
}

/** Releases, newest first, with who and when; "Restore" makes one the draft again. */
export function ReleasesPanel({
  campaign,
  seq,
  canEdit,
  unsaved,
  onRestored,
}: {
  campaign: Campaign;
  seq: number;
  canEdit: boolean;
  unsaved: boolean;
  onRestored: (c: Campaign, number: number) => Promise<void>;
}) {
  const { user } = useSession();
  const releases = useLoad(() => api.get<Page<CampaignRelease>>(`campaigns/${campaign.id}/releases?limit=100`), [campaign.id]);
  useEffect(() => {
    if (seq > 0) void releases.reload();
  }, [seq]);
  const restore = useAction(async (r: CampaignRelease) => {
    if (unsaved || campaign.unpublishedChanges) {
      const yes = await confirmAction({
        title: `Make release ${r.number} the draft again?`,
        body: <p>{unsaved ? 'Your unsaved edits are lost' : 'The draft’s changes that are not released are lost'}. Screens keep the current release.</p>,
        confirmLabel: 'Replace the draft',
        danger: true,
      });
      if (!yes) return;
    }
    try {
      const next = await api.post<Campaign>(`campaigns/${campaign.id}/releases/${r.id}/restore`, undefined, {
        headers: { 'if-match': `"${campaign.revision}"` },
      });
      await onRestored(next, r.number);
    } catch (err) {
      throw explain(err, `restore release ${r.number}`);
    }
  });
  const who = (id: string | null) => (!id ? 'Placard' : id === user.id ? `${user.displayName} (you)` : 'another user');
  const items = releases.data?.items ?? [];
  return (
    <article aria-labelledby="releases-h">
      <h2 id="releases-h">Releases</h2>
      <ErrorNote error={releases.error} />
      <ErrorNote error={restore.error} />
      {releases.data && items.length === 0 && <p class="muted">Not released yet.</p>}
      {items.length > 0 && (
        <ul class="command-list" data-testid="releases">
          {items.map((r) => (
            <li key={r.id} class="row spread" data-release={r.number}>
              <span>
                <strong>Release {r.number}</strong>
                {campaign.publication?.id === r.id && <span class="badge ok">on screens</span>} · {who(r.publishedBy)} ·{' '}
                <time dateTime={r.publishedAt}>{formatTime(r.publishedAt)}</time>
                {r.note && ` · ${r.note}`}
              </span>
              {canEdit && (
                <button type="button" class="secondary outline small" aria-busy={restore.busy} onClick={() => void restore.run(r)}>
                  Restore release {r.number} to the draft
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
    </article>
  );
}
