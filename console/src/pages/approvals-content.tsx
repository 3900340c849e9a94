import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiError, api, atLeast, qs, type Page } from '../api';
import type { operations } from '../api-schema';
import { ErrorNote, formatTime, Notice, useAction, useLoad, useSession } from '../ui';
import { CompareView, type ContentType } from '../ui/compare';

/**
 * The approvals inbox's content section (issue 20, docs/publishing.md "Submissions"):
 * submissions of playlists, layouts, schedules, widgets and campaigns. Publishers and above
 * see everyone's, filtered by state, and decide on them (approve, request changes, publish now
 * or at a time, cancel a schedule); editors and viewers see their own, with the decision's
 * comment. `?submission=<id>` opens one (the notifications link there).
 */
export type Submission = operations['getContentSubmissions']['responses'][200]['content']['application/json']['data']['items'][number];
type SubmissionDetail = operations['getContentSubmissionsById']['responses'][200]['content']['application/json']['data'];
type History = operations['getContentHistoryByTypeByIdPublications']['responses'][200]['content']['application/json']['data'];

const FILTERS = [
  { id: 'pending', label: 'Pending' },
  { id: 'approved', label: 'Approved' },
  { id: 'scheduled', label: 'Scheduled' },
  { id: 'done', label: 'Done' },
] as const;
type Filter = (typeof FILTERS)[number]['id'];
/** What "Done" holds: the submissions nobody acts on any more. */
const DONE: readonly string[] = ['published', 'changes_requested', 'cancelled', 'stale'];

const STATE_WORDS: Record<string, string> = {
  pending: 'Pending',
  changes_requested: 'Changes requested',
  approved: 'Approved',
  scheduled: 'Scheduled',
  published: 'Published',
  cancelled: 'Cancelled',
  stale: 'Stale: the draft changed',
};
const tone = (state: string) =>
  state === 'published' ? 'ok' : state === 'stale' || state === 'changes_requested' ? 'bad' : state === 'cancelled' ? '' : 'warn';

/** Where an item is edited in the console. */
function itemHref(s: Submission): string {
  const paths: Record<string, string> = { playlist: 'playlists', layout: 'layouts', widget: 'widgets', campaign: 'campaigns' };
  return paths[s.type] ? `/${paths[s.type]}/${s.contentId}` : '/schedules';
}

/** Pending content submissions for the nav badge: only those who decide on them are waited on. */
export async function pendingSubmissionsCount(): Promise<string> {
  const page = await api.get<Page<Submission>>('content-submissions?state=pending&limit=20');
  return page.items.length === 0 ? '' : page.nextCursor ? '20+' : String(page.items.length);
}

/** Two badge counts ("", "3", "20+") added up. */
export function addCounts(a: string, b: string): string {
  const n = (Number.parseInt(a, 10) || 0) + (Number.parseInt(b, 10) || 0);
  if (n === 0) return '';
  return a.endsWith('+') || b.endsWith('+') ? `${n}+` : String(n);
}

export function ContentSubmissions() {
  const { user } = useSession();
  const decides = atLeast(user, 'publisher');
  const { query, route, path } = useLocation();
  const [filter, setFilter] = useState<Filter>('pending');
  const list = useLoad(
    async () => ({
      filter,
      page: await api.get<Page<Submission>>(
        `content-submissions${qs(decides ? { state: filter === 'done' ? undefined : filter, limit: 100 } : { submittedBy: 'me', limit: 100 })}`,
      ),
    }),
    [filter, decides],
  );
  // Only the list loaded for the chosen filter: the previous one stays in `data` until the new
  // answer, and showing it under the new filter flashed items that do not belong there.
  const loaded = list.data?.filter === filter ? list.data.page : undefined;
  const items = (loaded?.items ?? []).filter((s) => !decides || filter !== 'done' || DONE.includes(s.state));
  const open = query.submission;
  const show = (id: string | null) => route(id ? `${path}?submission=${encodeURIComponent(id)}` : path);
  return (
    <section aria-labelledby="content-heading" class="content-submissions">
      <h2 id="content-heading">Content</h2>
      <p class="muted">
        {decides
          ? 'Playlists, layouts, schedules and widgets submitted for approval, newest first.'
          : 'What you submitted for approval, newest first, with the decision.'}
      </p>
      {open && <SubmissionDetailView key={open} id={open} decides={decides} onChange={() => void list.reload()} onClose={() => show(null)} />}
      {decides && (
        <div class="filters" role="group" aria-label="Show submissions">
          {FILTERS.map((f) => (
            <button
              key={f.id}
              type="button"
              class={`small${filter === f.id ? '' : ' secondary outline'}`}
              aria-pressed={filter === f.id}
              onClick={() => setFilter(f.id)}
            >
              {f.label}
            </button>
          ))}
        </div>
      )}
      <ErrorNote error={list.error} />
      {loaded && items.length === 0 && <p class="muted">{decides ? 'No submissions here.' : 'You have not submitted anything.'}</p>}
      <ul class="approvals" aria-label="Content submissions">
        {items.map((s) => (
          <li key={s.id} data-submission={s.id} data-state={s.state}>
            <article aria-label={`${s.type} ${s.contentName}`}>
              <header>
                <span class="badge">{s.type}</span> <strong>{s.contentName}</strong>{' '}
                <span class={`badge ${tone(s.state)}`}>{STATE_WORDS[s.state] ?? s.state}</span>
                {s.kind === 'rollback' && <span class="badge">Roll back</span>}{' '}
                <small class="muted">
                  by {s.submittedByName ?? 'a deleted user'} · {formatTime(s.createdAt)}
                  {s.state === 'scheduled' && s.publishAt && <> · publishes {formatTime(s.publishAt)}</>}
                </small>
              </header>
              {s.message && <p class="submission-message">“{s.message}”</p>}
              {s.comment && (
                <p class="submission-comment" data-testid="decision-comment">
                  <strong>Comment:</strong> {s.comment}
                </p>
              )}
              <button type="button" class="secondary small" onClick={() => show(s.id)} aria-label={`Open the submission of ${s.contentName}`}>
                Open
              </button>
            </article>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** The two sides to compare: what screens play and the submitted draft; once published, that publication and the one before. */
function compareSides(s: SubmissionDetail, history: History | undefined): { from: string; to: string } | string | null {
  if (s.kind === 'rollback' && !s.publication) return 'A roll back to an earlier publication: see the item’s history for what it carries.';
  if (!s.publication) return { from: 'published', to: 'draft' };
  if (!history) return null;
  const before = history.items.find((p) => p.number === s.publication!.number - 1);
  return before ? { from: before.id, to: s.publication.id } : 'Its first publication: nothing to compare with.';
}

function SubmissionDetailView(props: { id: string; decides: boolean; onChange: () => void; onClose: () => void }) {
  const { id, decides } = props;
  const detail = useLoad(() => api.get<SubmissionDetail>(`content-submissions/${encodeURIComponent(id)}`), [id]);
  const s = detail.data;
  const history = useLoad(
    async () => (s?.publication ? api.get<History>(`content-history/${s.type}/${s.contentId}/publications?limit=100`) : undefined),
    [s?.publication?.id],
  );
  const [said, setSaid] = useState<string | null>(null);
  // A refusal, in the server's words, shown here: a 409 (stale, state moved on) also reloads the submission.
  const [failure, setFailure] = useState<unknown>(null);
  const done = (words: string) => {
    setSaid(words);
    setFailure(null);
    void detail.reload();
    props.onChange();
  };
  const failed = (err: unknown) => {
    setSaid(null);
    setFailure(err);
    if (err instanceof ApiError && err.status === 409) {
      void detail.reload();
      props.onChange();
    }
  };
  if (detail.error)
    return (
      <article class="submission-detail">
        <ErrorNote error={detail.error} />
        <button type="button" class="secondary small" onClick={props.onClose}>
          Close
        </button>
      </article>
    );
  if (!s) return <p aria-busy="true">Loading the submission…</p>;
  const sides = compareSides(s, history.data);
  return (
    <article class="submission-detail" aria-labelledby="submission-title" data-testid="submission-detail" data-state={s.state}>
      <header class="row">
        <h3 id="submission-title">
          {s.type.charAt(0).toUpperCase() + s.type.slice(1)} <a href={itemHref(s)}>{s.contentName}</a>
        </h3>
        <span class={`badge ${tone(s.state)}`} data-testid="submission-state">
          {STATE_WORDS[s.state] ?? s.state}
        </span>
        <button type="button" class="secondary outline small" onClick={props.onClose}>
          Close
        </button>
      </header>
      <p class="muted">
        Submitted by {s.submittedByName ?? 'a deleted user'} on {formatTime(s.createdAt)}
        {s.publishAt && s.state === 'scheduled' && <> · publishes on {formatTime(s.publishAt)}</>}
        {s.publication && <> · publication {s.publication.number}</>}
      </p>
      {s.message && <p class="submission-message">“{s.message}”</p>}
      {s.comment && (
        <p class="submission-comment" data-testid="decision-comment">
          <strong>Comment:</strong> {s.comment}
        </p>
      )}
      {s.state === 'stale' && <p class="error-note">The draft changed after it was submitted: it has to be submitted again.</p>}
      {said && <Notice>{said}</Notice>}
      <ErrorNote error={failure} />
      {sides === null ? null : typeof sides === 'string' ? (
        <p class="muted">{sides}</p>
      ) : (
        <CompareView type={s.type as ContentType} id={s.contentId} from={sides.from} to={sides.to} />
      )}
      {decides && <Decide s={s} onDone={done} onFail={failed} />}
      <details>
        <summary>Trail ({s.events.length})</summary>
        <ol class="submission-events">
          {s.events.map((e) => (
            <li key={`${e.at}${e.action}`}>
              {formatTime(e.at)}: {STATE_WORDS[e.action] ?? e.action.replace(/_/g, ' ')} by {e.byName ?? 'Placard'}
              {e.comment && <> — “{e.comment}”</>}
            </li>
          ))}
        </ol>
      </details>
    </article>
  );
}

/** A datetime-local value (this browser's zone) an hour from now. */
function inAnHour(): string {
  const d = new Date(Date.now() + 3600_000);
  d.setSeconds(0, 0);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

function Decide({ s, onDone, onFail }: { s: SubmissionDetail; onDone: (words: string) => void; onFail: (err: unknown) => void }) {
  const [comment, setComment] = useState('');
  const [when, setWhen] = useState(inAnHour);
  const act = useAction(async (action: string, body: Record<string, unknown>, words: string) => {
    try {
      await api.post(`content-submissions/${s.id}/${action}`, body);
    } catch (err) {
      onFail(err);
      return;
    }
    setComment('');
    onDone(words);
  });
  const [local, setLocal] = useState<string | null>(null);
  const run = (action: string, body: Record<string, unknown>, words: string) => {
    setLocal(null);
    void act.run(action, body, words);
  };
  const error = local;
  if (s.state === 'pending')
    return (
      <form class="decide" aria-label="Decide" onSubmit={(e) => e.preventDefault()}>
        <label>
          Comment <small class="muted">(required to request changes)</small>
          <textarea name="comment" rows={2} maxLength={2000} value={comment} onInput={(e) => setComment(e.currentTarget.value)} />
        </label>
        <div class="row">
          <button type="button" disabled={act.busy} onClick={() => run('approve', comment.trim() ? { comment: comment.trim() } : {}, 'Approved.')}>
            Approve
          </button>
          <button
            type="button"
            class="secondary"
            disabled={act.busy}
            onClick={() =>
              comment.trim()
                ? run('request-changes', { comment: comment.trim() }, 'Sent back for changes.')
                : setLocal('Say in the comment what should change.')
            }
          >
            Request changes
          </button>
        </div>
        <ErrorNote error={error} />
      </form>
    );
  if (s.state === 'approved')
    return (
      <form class="decide" aria-label="Publish" onSubmit={(e) => e.preventDefault()}>
        <div class="row">
          <button type="button" disabled={act.busy} onClick={() => run('publish', {}, 'Published: screens are being told.')}>
            Publish now
          </button>
        </div>
        <label>
          Or publish at (your time)
          <input type="datetime-local" name="publishAt" step={1} value={when} onInput={(e) => setWhen(e.currentTarget.value)} />
        </label>
        <button
          type="button"
          class="secondary"
          disabled={act.busy}
          onClick={() => {
            const at = new Date(when);
            if (!when || Number.isNaN(at.getTime())) return setLocal('Pick a date and time to publish at.');
            run('schedule', { publishAt: at.toISOString() }, `Scheduled for ${formatTime(at.toISOString())}.`);
          }}
        >
          Schedule
        </button>
        <ErrorNote error={error} />
      </form>
    );
  if (s.state === 'scheduled')
    return (
      <div class="decide">
        <button type="button" class="secondary" disabled={act.busy} onClick={() => run('cancel-schedule', {}, 'Schedule cancelled: approved again.')}>
          Cancel schedule
        </button>
        <ErrorNote error={error} />
      </div>
    );
  return null;
}
