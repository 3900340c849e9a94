import { useEffect } from 'preact/hooks';
import { api, atLeast, type Page } from '../api';
import type { Asset, Screen } from '../types';
import { ErrorNote, formatTime, useLoad, useSession, useTitle } from '../ui';
import { STATUS_CLASS, STATUS_LABEL } from './screens';

interface ScheduleBrief {
  id: string;
  name: string;
  enabled: boolean;
  content: { type: string; id: string; name: string | null };
  nextOccurrence: { startsAt: string; endsAt: string | null } | null;
}

/** At most `limit` of a list, and whether there were more. */
const first = <T,>(page: Page<T> | undefined, limit: number) => ({
  items: (page?.items ?? []).slice(0, limit),
  more: Boolean(page && (page.items.length > limit || page.nextCursor)),
});
const countOf = (page: Page<unknown> | undefined) => (page ? `${page.items.length}${page.nextCursor ? '+' : ''}` : '…');

/**
 * The overview: the fleet's state (online / stale / offline / never seen, which screens
 * need attention), media still processing or failed, what is scheduled now and next,
 * and quick links. Refreshes every 30 s while open.
 */
export function HomePage() {
  useTitle('Overview');
  const { user } = useSession();
  const screens = useLoad(() => api.get<Page<Screen>>('screens?limit=500'));
  const processing = useLoad(() => api.get<Page<Asset>>('assets?state=processing&limit=100'));
  const failed = useLoad(() => api.get<Page<Asset>>('assets?state=failed&limit=100'));
  const schedules = useLoad(() => api.get<Page<ScheduleBrief>>('schedules?limit=500'));
  useEffect(() => {
    const timer = setInterval(() => {
      void screens.reload();
      void processing.reload();
      void failed.reload();
      void schedules.reload();
    }, 30_000);
    return () => clearInterval(timer);
  }, [screens.reload, processing.reload, failed.reload, schedules.reload]);

  const live = (screens.data?.items ?? []).filter((s) => !s.revoked);
  const counts = { online: 0, stale: 0, offline: 0, pending: 0 };
  for (const s of live) counts[s.status]++;
  const attention = live.filter((s) => s.status === 'offline' || s.status === 'stale' || s.disabled);
  const now = Date.now();
  const enabled = (schedules.data?.items ?? []).filter((s) => s.enabled && s.nextOccurrence);
  const onNow = enabled.filter(
    (s) => Date.parse(s.nextOccurrence!.startsAt) <= now && (!s.nextOccurrence!.endsAt || Date.parse(s.nextOccurrence!.endsAt) > now),
  );
  const upcoming = enabled
    .filter((s) => Date.parse(s.nextOccurrence!.startsAt) > now)
    .sort((a, b) => Date.parse(a.nextOccurrence!.startsAt) - Date.parse(b.nextOccurrence!.startsAt));
  const failedList = first(failed.data, 5);
  const attentionList = { items: attention.slice(0, 5), more: attention.length > 5 };

  return (
    <>
      <hgroup>
        <h1>Hello, {user.displayName}</h1>
        <p>Your Placard server at a glance</p>
      </hgroup>
      <div class="cards overview">
        <article aria-labelledby="ov-screens" data-testid="overview-screens">
          <header>
            <h2 id="ov-screens">Screens</h2>
          </header>
          <ErrorNote error={screens.error} />
          <ul class="status-counts">
            {(['online', 'stale', 'offline', 'pending'] as const).map((k) => (
              <li key={k}>
                <a href={`/screens?status=${k}`} class={`badge ${STATUS_CLASS[k]}`} data-status={k} data-count={screens.data ? counts[k] : undefined}>
                  <span class="dot" aria-hidden="true" /> {screens.data ? counts[k] : '…'} {STATUS_LABEL[k].toLowerCase()}
                </a>
              </li>
            ))}
          </ul>
          {screens.data && live.length === 0 && <p class="muted">No screens yet. Open /play on a screen and add it with the code it shows.</p>}
          {attentionList.items.length > 0 && (
            <>
              <h3 class="small-heading">Needs attention</h3>
              <ul class="plain" aria-label="Screens that need attention">
                {attentionList.items.map((s) => (
                  <li key={s.id} data-screen={s.name}>
                    <a href={`/screens/${s.id}`}>{s.name}</a>{' '}
                    <small class="muted">{s.disabled ? 'disabled' : `${STATUS_LABEL[s.status].toLowerCase()}, last seen ${formatTime(s.lastSeenAt)}`}</small>
                  </li>
                ))}
                {attentionList.more && <li class="muted">and {attention.length - attentionList.items.length} more</li>}
              </ul>
            </>
          )}
          <footer class="row">
            <a href="/screens">All screens</a>
            {atLeast(user, 'admin') && (
              <a href="/screens/add" role="button" class="outline small">
                Add screen
              </a>
            )}
          </footer>
        </article>

        <article aria-labelledby="ov-now" data-testid="overview-now">
          <header>
            <h2 id="ov-now">Scheduled now</h2>
          </header>
          <ErrorNote error={schedules.error} />
          {schedules.data && onNow.length === 0 && <p class="muted">No schedule is on now: screens play their default playlist.</p>}
          <ul class="plain" aria-label="On now">
            {onNow.map((s) => (
              <li key={s.id} data-schedule={s.name}>
                <strong>{s.name}</strong> · {s.content.name ?? s.content.type}
                {s.content.type === 'layout' ? ' (layout)' : ''}{' '}
                <small class="muted">{s.nextOccurrence!.endsAt ? `until ${formatTime(s.nextOccurrence!.endsAt)}` : 'no end'}</small>
              </li>
            ))}
          </ul>
          {upcoming.length > 0 && (
            <>
              <h3 class="small-heading">Coming up</h3>
              <ul class="plain" aria-label="Coming up">
                {upcoming.slice(0, 3).map((s) => (
                  <li key={s.id} data-schedule={s.name}>
                    {s.name} · {s.content.name ?? s.content.type} <small class="muted">{formatTime(s.nextOccurrence!.startsAt)}</small>
                  </li>
                ))}
              </ul>
            </>
          )}
          <footer>
            <a href="/schedules">Schedules and the calendar</a>
          </footer>
        </article>

        <article aria-labelledby="ov-media" data-testid="overview-media">
          <header>
            <h2 id="ov-media">Media</h2>
          </header>
          <ErrorNote error={processing.error ?? failed.error} />
          <p>
            <span class="badge" data-processing={processing.data ? countOf(processing.data) : undefined}>
              {countOf(processing.data)} processing
            </span>{' '}
            <span class={`badge ${failed.data?.items.length ? 'bad' : ''}`} data-failed={failed.data ? countOf(failed.data) : undefined}>
              {countOf(failed.data)} failed
            </span>
          </p>
          {failedList.items.length > 0 && (
            <ul class="plain" aria-label="Failed media">
              {failedList.items.map((a) => (
                <li key={a.id} data-asset={a.name}>
                  {a.name} <small class="muted">{a.failureReason ?? 'failed'}</small>
                </li>
              ))}
              {failedList.more && <li class="muted">and more</li>}
            </ul>
          )}
          <footer class="row">
            <a href="/library">Library</a>
            {atLeast(user, 'editor') && (
              <a href="/library" role="button" class="outline small">
                Upload media
              </a>
            )}
          </footer>
        </article>

        <article aria-labelledby="ov-links">
          <header>
            <h2 id="ov-links">Quick links</h2>
          </header>
          <ul class="plain quick-links">
            <li>
              <a href="/playlists">Playlists</a>
            </li>
            <li>
              <a href="/layouts">Layouts</a>
            </li>
            <li>
              <a href="/groups">Groups</a> and <a href="/locations">locations</a>
            </li>
            <li>
              <a href="/account">Account &amp; security</a> <small class="muted">second factors, theme</small>
            </li>
            {atLeast(user, 'admin') && (
              <li>
                <a href="/users">Users</a>
              </li>
            )}
          </ul>
        </article>
      </div>
    </>
  );
}
