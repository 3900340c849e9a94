import { useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, ApiError, atLeast, type Page } from '../api';
import type { Group, LayoutSummary, Location, PlaylistSummary, Screen } from '../types';
import { UnpublishedBadge } from '../ui/publishing';
import { ErrorNote, formatTime, Notice, useAction, useLoad, useSession, useTitle } from '../ui';
import { confirmAction, showToast } from '../ui/confirm';
import type { Schedule } from '../types';
import { EditSchedule, ScheduleForm } from './schedule-form';
import { Preview } from './schedule-preview';
import { describeRrule, wallClock, zoneWords } from './schedule-rules';

/** Schedules: when which content plays where, with recurrence; and what a screen will show. */
export function SchedulesPage() {
  useTitle('Schedules');
  const { user } = useSession();
  const canEdit = atLeast(user, 'publisher');
  const { query } = useLocation();
  const schedules = useLoad(() => api.get<Page<Schedule>>('schedules?limit=500'));
  const playlists = useLoad(() => api.get<Page<PlaylistSummary>>('playlists?limit=500'));
  const layouts = useLoad(() => api.get<Page<LayoutSummary>>('layouts?limit=500'));
  const [editing, setEditing] = useState<Schedule | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  // "Schedule it" on a layout or playlist page lands here with ?layout= or ?playlist=.
  const preset = query.layout ? `layout:${query.layout}` : query.playlist ? `playlist:${query.playlist}` : '';
  const screens = useLoad(() => api.get<Page<Screen>>('screens?limit=500'));
  const groups = useLoad(() => api.get<Page<Group>>('screen-groups?limit=500'));
  const locations = useLoad(() => api.get<Page<Location>>('locations?limit=500'));
  // The server's default time zone: screens without a location run in it.
  const settings = useLoad(() => api.get<{ timeZone: string }>('settings'));
  // ?edit=<id> (links from "in use" lists) opens that schedule's form.
  const openedFromLink = useRef<string | null>(null);
  useEffect(() => {
    // Once per link: after that save or Cancel closes the form for good.
    if (!query.edit || openedFromLink.current === query.edit) return;
    const wanted = schedules.data?.items.find((s) => s.id === query.edit);
    if (wanted) {
      openedFromLink.current = query.edit;
      setEditing(wanted);
    }
  }, [query.edit, schedules.data]);
  const setEnabled = async (s: Schedule, enabled: boolean) => {
    await api.patch(`schedules/${s.id}`, { enabled }, { headers: { 'if-match': `"${s.revision}"` } }).catch(async (err) => {
      if (err instanceof ApiError && err.status === 412) {
        // Someone changed it meanwhile: apply to the current revision (pausing is not an edit of its content).
        await api.patch(`schedules/${s.id}`, { enabled });
        return;
      }
      throw err;
    });
    await schedules.reload();
  };
  const toggle = useAction(async (s: Schedule) => {
    const yes = await confirmAction({
      title: `${s.enabled ? 'Pause' : 'Resume'} “${s.name}”?`,
      body: s.enabled ? (
        <p>Its screens stop playing {s.content.name ?? 'it'} at its times and fall back to their default playlist (or a weaker schedule).</p>
      ) : (
        <p>Its screens play {s.content.name ?? 'it'} again at its times.</p>
      ),
      confirmLabel: s.enabled ? 'Pause' : 'Resume',
      impact: { scheduleIds: [s.id] },
      screens: s.enabled ? undefined : screensOfSchedule(s),
      screensLabel: s.enabled ? 'These screens follow it now:' : 'It targets:',
    });
    if (!yes) return;
    await setEnabled(s, !s.enabled);
    showToast(`${s.enabled ? 'Paused' : 'Resumed'} “${s.name}”.`, async () => setEnabled({ ...s, revision: s.revision + 1 }, s.enabled));
  });
  const remove = useAction(async (s: Schedule) => {
    const yes = await confirmAction({
      title: `Delete the schedule “${s.name}”?`,
      body: <p>Its screens stop playing {s.content.name ?? 'it'} at its times. This cannot be undone; pausing keeps it.</p>,
      confirmLabel: 'Delete schedule',
      danger: true,
      impact: { scheduleIds: [s.id] },
      screens: screensOfSchedule(s),
      screensLabel: 'It targets:',
    });
    if (!yes) return;
    await api.del(`schedules/${s.id}`);
    showToast(`Deleted the schedule “${s.name}”.`);
    await schedules.reload();
  });
  const screensOfSchedule = (s: Schedule) =>
    (screens.data?.items ?? []).filter(
      (x) =>
        s.targets.screenIds.includes(x.id) ||
        x.groupIds.some((g) => s.targets.groupIds.includes(g)) ||
        (x.locationId !== null && s.targets.locationIds.includes(x.locationId)),
    );
  const nameOf = (s: Schedule) =>
    [
      ...s.targets.screenIds.map((id) => screens.data?.items.find((x) => x.id === id)?.name ?? 'screen'),
      ...s.targets.groupIds.map((id) => `group ${groups.data?.items.find((x) => x.id === id)?.name ?? ''}`),
      ...s.targets.locationIds.map((id) => `location ${locations.data?.items.find((x) => x.id === id)?.name ?? ''}`),
    ].join(', ') || '—';

  return (
    <>
      <hgroup>
        <h1>Schedules</h1>
        <p>Play a playlist or a layout on screens, groups or locations at set times. Higher priority wins where schedules overlap.</p>
      </hgroup>
      <Preview screens={screens.data?.items ?? []} groups={groups.data?.items ?? []} version={schedules.data} />
      {canEdit && (playlists.data || playlists.error) && (layouts.data || layouts.error) && (
        <details open={Boolean(preset) || undefined}>
          <summary role="button" class="outline">
            New schedule
          </summary>
          <ScheduleForm
            key={preset}
            preset={preset}
            playlists={playlists.data?.items ?? []}
            layouts={layouts.data?.items ?? []}
            screens={screens.data?.items ?? []}
            groups={groups.data?.items ?? []}
            locations={locations.data?.items ?? []}
            defaultZone={settings.data?.timeZone ?? null}
            onSaved={async (s) => {
              setSaved(`Schedule ${s.name} created.`);
              await schedules.reload();
            }}
          />
        </details>
      )}
      {editing && screens.data && groups.data && locations.data && (
        <EditSchedule
          key={`${editing.id}:${editing.revision}`}
          schedule={editing}
          playlists={playlists.data?.items ?? []}
          layouts={layouts.data?.items ?? []}
          screens={screens.data?.items ?? []}
          groups={groups.data?.items ?? []}
          locations={locations.data?.items ?? []}
          defaultZone={settings.data?.timeZone ?? null}
          onDone={async (s) => {
            setEditing(null);
            if (s) setSaved(`Schedule ${s.name} saved.`);
            await schedules.reload();
          }}
        />
      )}
      {saved && <Notice>{saved}</Notice>}
      <ErrorNote error={schedules.error ?? playlists.error ?? layouts.error ?? toggle.error ?? remove.error} />
      <div class="table-wrap">
        <table class="striped">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Plays</th>
              <th scope="col">Where</th>
              <th scope="col">When</th>
              <th scope="col">Priority</th>
              <th scope="col">Next</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {(schedules.data?.items ?? []).map((s) => (
              <tr key={s.id} data-schedule={s.name} class={s.enabled ? undefined : 'disabled'}>
                <td>
                  {s.name} <UnpublishedBadge unpublished={s.unpublishedChanges} />
                </td>
                <td>
                  {s.content.name ?? s.content.type}
                  {s.content.type === 'layout' && <small class="muted"> layout</small>}
                </td>
                <td>{nameOf(s)}</td>
                <td>
                  {formatTime(s.startsAt)}
                  {s.endsAt ? ` – ${formatTime(s.endsAt)}` : ''} · {describeRrule(s.rrule, Number(wallClock(s.startsAt, s.timeZone).slice(8, 10)))}
                  <br />
                  <small class="muted">{s.followsScreenTimeZone ? 'at each screen’s local time' : `in ${zoneWords(s.timeZone)}`}</small>
                  {s.rrule && (
                    <details class="expert">
                      <summary>Repeat rule</summary>
                      <code>{s.rrule}</code>
                    </details>
                  )}
                </td>
                <td>{s.priority}</td>
                <td data-testid="next">
                  <NextText s={s} />
                </td>
                <td class="actions">
                  {canEdit && (
                    <>
                      <button
                        type="button"
                        class="secondary outline small"
                        aria-label={`Edit ${s.name}`}
                        onClick={() => {
                          setSaved(null);
                          setEditing(s);
                        }}
                      >
                        Edit
                      </button>
                      <button
                        type="button"
                        class="secondary outline small"
                        aria-label={`${s.enabled ? 'Pause' : 'Resume'} ${s.name}`}
                        onClick={() => void toggle.run(s)}
                      >
                        {s.enabled ? 'Pause' : 'Resume'}
                      </button>
                      <button type="button" class="contrast outline small" aria-label={`Delete ${s.name}`} onClick={() => void remove.run(s)}>
                        Delete
                      </button>
                    </>
                  )}
                </td>
              </tr>
            ))}
            {schedules.data && schedules.data.items.length === 0 && (
              <tr>
                <td colSpan={7} class="muted">
                  No schedules: screens play their default playlist.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
    </>
  );
}

/** When it plays next, never a time in the past: an occurrence under way reads "on now". */
function NextText({ s }: { s: Schedule }) {
  if (!s.enabled) return <span class="muted">paused</span>;
  const n = s.nextOccurrence;
  if (!n) return <span class="muted">no more</span>;
  const now = Date.now();
  if (Date.parse(n.startsAt) <= now) {
    if (n.endsAt && Date.parse(n.endsAt) <= now) return <span class="muted">—</span>;
    return <span>on now{n.endsAt ? `, until ${formatTime(n.endsAt)}` : ''}</span>;
  }
  return <span>{formatTime(n.startsAt)}</span>;
}
