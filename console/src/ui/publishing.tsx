import { useState } from 'preact/hooks';
import { api, atLeast, type Page, type User } from '../api';
import { ErrorNote, formatTime, Notice, useAction, useLoad, useSession } from '../ui';
import { CompareView, type ContentType } from './compare';
import { confirmAction } from './confirm';
import { Modal } from './dialogs';

/**
 * Drafts, submissions and history on the content pages (issue 20, docs/publishing.md):
 * the "Unpublished changes" pill, "Submit for approval" (approvals on) and the publications
 * timeline with compare, restore-to-draft and roll back.
 */

/** True when saves are drafts that need a submission (auth status `approvalsRequired`). */
export function useApprovalsRequired(): boolean {
  return Boolean(useSession().status.approvalsRequired);
}

export function UnpublishedBadge({ unpublished }: { unpublished: boolean }) {
  if (!unpublished) return null;
  return (
    <span class="badge warn" data-testid="unpublished-badge">
      Unpublished changes
    </span>
  );
}

/** Next to Save, with approvals on: what a save does (screens keep the publication they play). */
export function DraftNote({ publication }: { publication: { number: number } | null | undefined }) {
  if (!useApprovalsRequired()) return null;
  return (
    <small class="muted" data-testid="draft-note">
      {publication
        ? `Saved as a draft: screens keep playing publication ${publication.number} until a submission is approved and published.`
        : 'Saved as a draft: nothing is on screens until a submission is approved and published.'}
    </small>
  );
}

type Submission = { id: string; state: string; kind: 'draft' | 'rollback'; message: string; publication: { id: string; number: number } | null };
const STATE_WORDS: Record<string, string> = {
  pending: 'pending approval',
  changes_requested: 'changes requested',
  approved: 'approved, not published yet',
  scheduled: 'approved, publishing at a set time',
  published: 'published',
  cancelled: 'cancelled',
  stale: 'stale (the draft changed since)',
};
export const submissionWords = (state: string) => STATE_WORDS[state] ?? state;

export function SubmitForApproval({ type, id, onDone }: { type: ContentType; id: string; onDone?: () => void }) {
  const approvals = useApprovalsRequired();
  const [open, setOpen] = useState(false);
  const [message, setMessage] = useState('');
  const [done, setDone] = useState<Submission | null>(null);
  const submit = useAction(async () => {
    const s = await api.post<Submission>(`content-submissions/${type}/${id}`, { message: message.trim() || undefined });
    setDone(s);
    setOpen(false);
    setMessage('');
    onDone?.();
  });
  const close = () => {
    setOpen(false);
    submit.setError(null);
  };
  if (!approvals) return null;
  return (
    <>
      <button
        type="button"
        class="contrast"
        onClick={() => {
          setOpen(true);
          submit.setError(null);
        }}
      >
        Submit for approval
      </button>
      {done && (
        <Notice>
          Submitted: {submissionWords(done.state)}.{' '}
          <a href="/approvals" class="small">
            See approvals
          </a>
        </Notice>
      )}
      <Modal open={open} title="Submit for approval" busy={submit.busy} onClose={close} testId="submit-dialog">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            e.stopPropagation();
            void submit.run();
          }}
        >
          <p>The draft as it is now goes to a publisher. Screens keep playing what they play until it is approved and published.</p>
          <label>
            Message for the reviewer (optional)
            <textarea name="message" rows={3} maxLength={2000} value={message} onInput={(e) => setMessage(e.currentTarget.value)} />
          </label>
          <ErrorNote error={submit.error} />
          <div class="row">
            <button type="submit" aria-busy={submit.busy} disabled={submit.busy}>
              Submit
            </button>
            <button type="button" class="secondary outline" disabled={submit.busy} onClick={close}>
              Cancel
            </button>
          </div>
        </form>
      </Modal>
    </>
  );
}

type Publication = {
  id: string;
  number: number;
  publishedAt: string;
  publishedBy: string | null;
  note: string;
  source: 'edit' | 'submission' | 'rollback' | 'campaign' | 'migration';
  current: boolean;
};
const SOURCE_WORDS: Record<Publication['source'], string> = {
  edit: 'saved and published',
  submission: 'approved submission',
  rollback: 'roll back',
  campaign: 'campaign release',
  migration: 'from before history',
};

/** Who published, in words: you, a user's name (when this user may list users), else "someone". */
function useWho() {
  const { user } = useSession();
  const users = useLoad(() => (atLeast(user, 'admin') ? api.get<Page<User>>('users?limit=500').catch(() => null) : Promise.resolve(null)), [user.id]);
  return (uid: string | null) => {
    if (!uid) return 'the system';
    if (uid === user.id) return 'you';
    return users.data?.items.find((u) => u.id === uid)?.displayName ?? 'another user';
  };
}

/** `refresh`: a value the page changes when it published by itself (the list loads again). */
export function HistoryPanel({ type, id, onChange, refresh }: { type: ContentType; id: string; onChange?: () => void; refresh?: unknown }) {
  const { user } = useSession();
  const canEdit = atLeast(user, 'editor');
  const list = useLoad(() => api.get<Page<Publication>>(`content-history/${type}/${id}/publications?limit=50`), [type, id, refresh]);
  const who = useWho();
  const [picked, setPicked] = useState<string[]>([]);
  const [comparing, setComparing] = useState<[string, string] | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const pick = (pid: string, on: boolean) => {
    setComparing(null);
    setPicked((p) => (on ? [...p.filter((x) => x !== pid), pid].slice(-2) : p.filter((x) => x !== pid)));
  };
  const approvals = useApprovalsRequired();
  const restore = useAction(async (p: Publication) => {
    const yes = await confirmAction({
      title: `Make publication ${p.number} the draft again?`,
      body: <p>The draft’s changes that are not published, and any unsaved edits on this page, are replaced. Screens keep playing what they play now.</p>,
      confirmLabel: 'Replace the draft',
      danger: true,
    });
    if (!yes) return;
    await api.post(`content-history/${type}/${id}/publications/${p.id}/restore-draft`);
    setNotice(`Publication ${p.number} is the draft again; screens keep playing what they play.`);
    onChange?.();
  });
  const rollback = useAction(async (p: Publication) => {
    const yes = await confirmAction({
      title: `Roll back to publication ${p.number}?`,
      body: approvals ? (
        <p>Approvals are on: this makes a submission that a publisher approves before screens change.</p>
      ) : (
        <p>Its content is published again, as a new publication: screens playing it switch within seconds.</p>
      ),
      confirmLabel: approvals ? 'Submit the roll back' : 'Roll back',
      danger: !approvals,
    });
    if (!yes) return;
    // 201 { publication } (published at once) or 202 { submission } (approvals on): say which happened.
    const res = await api.post<{ publication?: Publication; submission?: Submission }>(`content-history/${type}/${id}/publications/${p.id}/rollback`);
    if (res.submission) setNotice(`A submission was made to roll back to publication ${p.number}; it is ${submissionWords(res.submission.state)}.`);
    else setNotice(`Rolled back: publication ${res.publication?.number} (the content of publication ${p.number}) is on screens now.`);
    await list.reload();
    onChange?.();
  });
  const items = list.data?.items ?? [];
  // Older first on the compare's "from" side.
  const ordered = (pair: string[]): [string, string] => {
    const n = (pid: string) => items.find((i) => i.id === pid)?.number ?? 0;
    const [a, b] = pair as [string, string];
    return n(a) <= n(b) ? [a, b] : [b, a];
  };
  return (
    <article aria-labelledby={`history-${id}`} class="history-panel" data-testid="history-panel">
      <header>
        <h2 id={`history-${id}`}>History</h2>
      </header>
      {list.error ? <ErrorNote error={list.error} /> : null}
      {list.loading && !list.data && <p aria-busy="true">Loading…</p>}
      {list.data && items.length === 0 && <p class="muted">Not published yet.</p>}
      {items.length > 0 && (
        <ol class="command-list" aria-label="Publications" reversed>
          {items.map((p) => (
            <li key={p.id} data-publication={p.number}>
              <label class="inline">
                <input
                  type="checkbox"
                  checked={picked.includes(p.id)}
                  onChange={(e) => pick(p.id, e.currentTarget.checked)}
                  aria-label={`Compare publication ${p.number}`}
                />{' '}
                <strong>Publication {p.number}</strong>
              </label>{' '}
              {p.current && <span class="badge ok">on screens</span>}{' '}
              <small class="muted">
                {formatTime(p.publishedAt)} by {who(p.publishedBy)} · {SOURCE_WORDS[p.source] ?? p.source}
              </small>
              {p.note && <span> · {p.note}</span>}{' '}
              {canEdit && (
                <span class="row-inline">
                  <button type="button" class="secondary outline small" disabled={restore.busy} onClick={() => void restore.run(p)}>
                    Restore to draft
                  </button>{' '}
                  {!p.current && (
                    <button type="button" class="secondary outline small" disabled={rollback.busy} onClick={() => void rollback.run(p)}>
                      Roll back
                    </button>
                  )}
                </span>
              )}
            </li>
          ))}
        </ol>
      )}
      {items.length > 0 && (
        <div class="row">
          <button type="button" class="secondary small" disabled={picked.length !== 2} onClick={() => setComparing(ordered(picked))}>
            Compare the two picked
          </button>
          <button type="button" class="secondary outline small" onClick={() => setComparing(['published', 'draft'])}>
            Compare the draft with what is on screens
          </button>
          {picked.length !== 2 && <small class="muted">Pick two publications to compare them.</small>}
        </div>
      )}
      <ErrorNote error={restore.error ?? rollback.error} />
      {notice && <Notice>{notice}</Notice>}
      {comparing && <CompareView type={type} id={id} from={comparing[0]} to={comparing[1]} />}
    </article>
  );
}

/**
 * For pages whose every edit is a write (playlists, schedules, widgets): with approvals on, a
 * row saying edits are drafts, with Submit for approval; nothing with approvals off (edits publish).
 */
export function DraftBar({
  type,
  id,
  publication,
  canEdit,
  onDone,
}: {
  type: ContentType;
  id: string;
  publication: { number: number } | null | undefined;
  canEdit: boolean;
  onDone?: () => void;
}) {
  if (!useApprovalsRequired() || !canEdit) return null;
  return (
    <div class="row draft-bar">
      <SubmitForApproval type={type} id={id} onDone={onDone} />
      <DraftNote publication={publication} />
    </div>
  );
}
