import { useEffect, useRef, useState } from 'preact/hooks';
import { RRule, type Options } from 'rrule';
import { useLocation } from 'preact-iso';
import { api, ApiError, atLeast, type Page } from '../api';
import type { Group, LayoutSummary, Location, PlaylistSummary, Screen } from '../types';
import { ErrorNote, formatTime, formValues, Notice, useAction, useLoad, useSession, useTitle } from '../ui';
import { confirmAction, showToast } from '../ui/confirm';

interface Schedule {
  id: string;
  name: string;
  content: { type: string; id: string; name: string | null };
  targets: { screenIds: string[]; groupIds: string[]; locationIds: string[] };
  startsAt: string;
  endsAt: string | null;
  rrule: string | null;
  timeZone: string;
  followsScreenTimeZone: boolean;
  priority: number;
  enabled: boolean;
  nextOccurrence: { startsAt: string; endsAt: string } | null;
  revision: number;
  updatedAt: string;
}
interface Segment {
  startsAt: string;
  endsAt: string;
  source: { type: string; id: string | null; name: string | null };
  content: { type: string; id: string; name: string | null } | null;
  reason: string;
}

const DAYS = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'] as const;
const DAY_LABEL: Record<(typeof DAYS)[number], string> = { MO: 'Mon', TU: 'Tue', WE: 'Wed', TH: 'Thu', FR: 'Fri', SA: 'Sat', SU: 'Sun' };

/** `iso` as the wall-clock `YYYY-MM-DDTHH:MM` of `zone` (what a datetime-local input holds). */
export function wallClock(iso: string, zone: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone: zone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(new Date(iso));
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '00';
  return `${get('year')}-${get('month')}-${get('day')}T${get('hour')}:${get('minute')}`;
}

const ordinal = (n: number) => `${n}${n % 10 === 1 && n !== 11 ? 'st' : n % 10 === 2 && n !== 12 ? 'nd' : n % 10 === 3 && n !== 13 ? 'rd' : 'th'}`;

/** A stored RRULE read by the rrule library (the server's own parser); null when it is not one. */
function parseRule(rrule: string): Partial<Options> | null {
  try {
    return RRule.parseString(rrule);
  } catch {
    return null;
  }
}

/** The rule's weekdays as MO..SU; null when one carries a position (1MO, -1FR: a custom repeat). */
function weekdaysOf(o: Partial<Options>): (typeof DAYS)[number][] | null {
  const list = o.byweekday == null ? [] : Array.isArray(o.byweekday) ? o.byweekday : [o.byweekday];
  const out: (typeof DAYS)[number][] = [];
  for (const d of list) {
    if (typeof d === 'string') out.push(d);
    else if (typeof d === 'number') out.push(DAYS[d]!);
    else if (d.n) return null;
    else out.push(DAYS[d.weekday]!);
  }
  return out;
}

/** The parts a rule sets, beside FREQ (rrule leaves the others out). */
const partsOf = (o: Partial<Options>) => Object.keys(o).filter((k) => k !== 'freq' && o[k as keyof Options] != null);

/** The recurrence in words; `startDay` (day of the month of the first occurrence) names a plain monthly one. */
function describeRrule(rrule: string | null, startDay?: number): string {
  if (!rrule) return 'once';
  const o = parseRule(rrule);
  const weekdays = o && weekdaysOf(o);
  if (!o || !weekdays || partsOf(o).some((k) => !['byweekday', 'until', 'bymonthday'].includes(k))) return 'on a custom repeat';
  const days = weekdays.map((d) => DAY_LABEL[d]).join(', ');
  const until = o.until ? ` until ${o.until.toISOString().slice(0, 10)}` : '';
  const monthDays = o.bymonthday == null ? [] : Array.isArray(o.bymonthday) ? o.bymonthday : [o.bymonthday];
  if (o.freq === RRule.DAILY && !weekdays.length && !monthDays.length) return `every day${until}`;
  if (o.freq === RRule.WEEKLY && !monthDays.length) return `every week${days ? ` on ${days}` : ''}${until}`;
  if (o.freq === RRule.MONTHLY && !weekdays.length && monthDays.length <= 1) {
    const day = monthDays[0] ?? startDay;
    return `every month${day && Number.isInteger(day) && day > 0 ? ` on the ${ordinal(day)}` : ''}${until}`;
  }
  return 'on a custom repeat';
}

/** "Paris time (Europe/Paris)": a zone in words people read, with its IANA name. */
export function zoneWords(zone: string): string {
  if (zone === 'UTC') return 'UTC';
  const city = zone.split('/').pop()!.replace(/_/g, ' ');
  return `${city} time (${zone})`;
}

/** The wall-clock difference between two zones now, e.g. "6 hours ahead of". */
function offsetMinutes(zone: string, at = new Date()): number {
  const wall = wallClock(at.toISOString(), zone);
  return Math.round((Date.parse(`${wall}:00Z`) - Math.floor(at.getTime() / 60_000) * 60_000) / 60_000);
}

type Repeat = 'none' | 'daily' | 'weekdays' | 'weekly' | 'monthly' | 'custom';

/** The form's repeat choice for a stored RRULE (anything it cannot say stays custom text). */
function repeatOf(rrule: string | null): { repeat: Repeat; days: string[]; custom: string } {
  if (!rrule) return { repeat: 'none', days: [], custom: '' };
  const o = parseRule(rrule);
  const weekdays = o && weekdaysOf(o);
  const parts = o ? partsOf(o) : [];
  if (o && weekdays && parts.every((k) => k === 'byweekday')) {
    if (o.freq === RRule.DAILY && !weekdays.length) return { repeat: 'daily', days: [], custom: '' };
    if (o.freq === RRule.MONTHLY && !weekdays.length) return { repeat: 'monthly', days: [], custom: '' };
    if (o.freq === RRule.WEEKLY && weekdays.join(',') === 'MO,TU,WE,TH,FR') return { repeat: 'weekdays', days: [], custom: '' };
    if (o.freq === RRule.WEEKLY) return { repeat: 'weekly', days: weekdays, custom: '' };
  }
  return { repeat: 'custom', days: [], custom: rrule };
}

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
                <td>{s.name}</td>
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

function localInput(d: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

interface FormProps {
  playlists: PlaylistSummary[];
  layouts: LayoutSummary[];
  screens: Screen[];
  groups: Group[];
  locations: Location[];
  /** The server's default time zone (screens without a location run in it). */
  defaultZone: string | null;
}

/** Editing a schedule, above the table: the same form filled with it. */
function EditSchedule({ schedule, onDone, ...lists }: FormProps & { schedule: Schedule; onDone: (saved: Schedule | null) => Promise<void> }) {
  const box = useRef<HTMLElement>(null);
  useEffect(() => box.current?.scrollIntoView({ block: 'nearest' }), []);
  return (
    <article ref={box} aria-labelledby="edit-h" class="edit-schedule">
      <header class="row spread">
        <h2 id="edit-h">Edit {schedule.name}</h2>
        <button type="button" class="secondary outline small" onClick={() => void onDone(null)}>
          Cancel
        </button>
      </header>
      <ScheduleForm {...lists} schedule={schedule} onSaved={(s) => onDone(s)} />
    </article>
  );
}

/**
 * New or existing schedule: what plays (a playlist or a published layout), where, when,
 * how it repeats, in which zone, priority. Local times are read by the server in the
 * chosen zone (or each screen's own).
 */
function ScheduleForm({
  playlists,
  layouts,
  screens,
  groups,
  locations,
  defaultZone,
  schedule,
  preset = '',
  onSaved,
}: FormProps & { schedule?: Schedule; preset?: string; onSaved: (s: Schedule) => Promise<void> }) {
  const initial = repeatOf(schedule?.rrule ?? null);
  const [repeat, setRepeat] = useState<Repeat>(initial.repeat);
  const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  // Live choices, to say in words which zone the times are read in.
  const [chosenZone, setChosenZone] = useState(schedule ? (schedule.followsScreenTimeZone ? '' : schedule.timeZone) : '');
  const [targetIds, setTargetIds] = useState<{ screens: string[]; groups: string[]; locations: string[] }>({
    screens: schedule?.targets.screenIds ?? [],
    groups: schedule?.targets.groupIds ?? [],
    locations: schedule?.targets.locationIds ?? [],
  });
  const [weekDays, setWeekDays] = useState<string[]>(initial.days);
  const [startValueLive, setStartValueLive] = useState<string | null>(null);
  const save = useAction(async (form: HTMLFormElement) => {
    const fd = new FormData(form);
    const v = formValues(form);
    let rrule: string | null = null;
    if (repeat === 'daily') rrule = 'FREQ=DAILY';
    if (repeat === 'weekdays') rrule = 'FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR';
    if (repeat === 'weekly') {
      const days = fd.getAll('byday').map(String);
      // "Weekly on…" with no day ticked used to save a weekly rule on the start's weekday, silently.
      if (days.length === 0)
        throw new ApiError(400, 'validation_failed', 'Tick at least one day for “Weekly on…”.', {
          issues: [{ path: ['byday'], message: 'Tick at least one day.' }],
        });
      rrule = `FREQ=WEEKLY;BYDAY=${days.join(',')}`;
    }
    if (repeat === 'monthly') rrule = 'FREQ=MONTHLY';
    if (repeat === 'custom') rrule = v.rrule?.trim() || null;
    const sec = (s: string | undefined) => (s ? (s.length === 16 ? `${s}:00` : s) : null);
    const [kind, contentId] = (v.content ?? '').split(':');
    const body = {
      name: v.name,
      content: kind === 'layout' ? { layoutId: contentId } : { playlistId: contentId },
      targets: {
        screenIds: fd.getAll('screenIds').map(String),
        groupIds: fd.getAll('groupIds').map(String),
        locationIds: fd.getAll('locationIds').map(String),
      },
      startsAt: sec(v.startsAt),
      endsAt: sec(v.endsAt),
      rrule,
      timeZone: v.timeZone || null,
      priority: Number(v.priority || 0),
    };
    let result: Schedule;
    if (schedule) {
      // If-Match: a change someone made since the form opened is refused (412), not overwritten.
      try {
        result = await api.patch<Schedule>(`schedules/${schedule.id}`, body, { headers: { 'if-match': `"${schedule.revision}"` } });
      } catch (err) {
        if (err instanceof ApiError && err.status === 412)
          throw new ApiError(412, 'version_conflict', 'Someone else changed this schedule since you opened it. Cancel and edit it again to see their version.');
        throw err;
      }
    } else {
      result = await api.post<Schedule>('schedules', { ...body, enabled: true });
      form.reset();
      setRepeat('none');
      setTargetIds({ screens: [], groups: [], locations: [] });
      setWeekDays([]);
      setChosenZone('');
      setStartValueLive(null);
    }
    await onSaved(result);
  });
  const now = new Date();
  now.setMinutes(0, 0, 0);
  const zone = schedule ? schedule.timeZone : browserZone;
  // The zones the chosen targets' screens run in (their location's, else the server's default).
  const targetZones = (() => {
    const zones = new Set<string>();
    const fallback = defaultZone ?? 'UTC';
    const zoneOfScreen = (s: Screen) => (s as Screen & { effectiveTimeZone?: string }).effectiveTimeZone ?? s.timeZone ?? fallback;
    for (const s of screens) if (targetIds.screens.includes(s.id) || s.groupIds.some((g) => targetIds.groups.includes(g))) zones.add(zoneOfScreen(s));
    for (const l of locations) if (targetIds.locations.includes(l.id)) zones.add(l.timeZone);
    return [...zones].sort();
  })();
  const readIn = chosenZone || (targetZones.length === 1 ? targetZones[0]! : null);
  const startValue = schedule ? wallClock(schedule.startsAt, zone) : localInput(now);
  const endValue = schedule ? (schedule.endsAt ? wallClock(schedule.endsAt, zone) : '') : localInput(new Date(now.getTime() + 3600_000));
  const contentValue = schedule ? `${schedule.content.type}:${schedule.content.id}` : preset;
  const zoneValue = schedule ? (schedule.followsScreenTimeZone ? '' : schedule.timeZone) : '';
  const zones = [
    ...new Set([...(defaultZone ? [defaultZone] : []), ...locations.map((l) => l.timeZone), browserZone, 'UTC', ...(zoneValue ? [zoneValue] : [])]),
  ];
  const startShown = startValueLive ?? startValue;
  const startHour = startShown.slice(11, 16);
  const targets = schedule?.targets;
  const fieldError = (f: string) => (save.error instanceof ApiError ? save.error.fieldMessage(f) : undefined);
  return (
    <form
      aria-label={schedule ? 'Edit schedule' : 'New schedule'}
      onSubmit={(e) => {
        e.preventDefault();
        void save.run(e.currentTarget);
      }}
      // A refusal is about what was sent: once the form changes it is stale, so it goes.
      // Checkboxes and selects fire `input` before `change`: state follows them here, in one render.
      onChange={() => save.error && save.setError(null)}
      onInput={(e) => {
        if (save.error) save.setError(null);
        const el = e.target as HTMLInputElement;
        if (el.type === 'checkbox' && ['screenIds', 'groupIds', 'locationIds'].includes(el.name)) {
          const key = el.name === 'screenIds' ? 'screens' : el.name === 'groupIds' ? 'groups' : 'locations';
          setTargetIds((t) => ({ ...t, [key]: el.checked ? [...t[key], el.value] : t[key].filter((x) => x !== el.value) }));
        }
        if (el.name === 'byday') setWeekDays((d) => (el.checked ? [...d, el.value] : d.filter((x) => x !== el.value)));
      }}
    >
      <div class="grid">
        <label>
          Name
          <input name="name" required maxLength={200} placeholder="e.g. Breakfast menu" defaultValue={schedule?.name ?? ''} />
        </label>
        <label>
          Plays
          <select name="content" required>
            <option value="" selected={!contentValue}>
              Choose a playlist or layout…
            </option>
            <optgroup label="Playlists">
              {playlists.map((p) => (
                <option key={p.id} value={`playlist:${p.id}`} selected={contentValue === `playlist:${p.id}`}>
                  {p.name}
                </option>
              ))}
            </optgroup>
            <optgroup label="Layouts (published)">
              {layouts.map((l) => (
                <option
                  key={l.id}
                  value={`layout:${l.id}`}
                  selected={contentValue === `layout:${l.id}`}
                  disabled={!l.publishedRevisionNumber && contentValue !== `layout:${l.id}`}
                >
                  {l.name}
                  {l.publishedRevisionNumber ? '' : ' (not published)'}
                </option>
              ))}
            </optgroup>
          </select>
          {fieldError('content') && <small>{fieldError('content')}</small>}
        </label>
        <label>
          Priority
          <input name="priority" type="number" min={-1000} max={1000} defaultValue={String(schedule?.priority ?? 0)} />
        </label>
      </div>
      <fieldset>
        <legend>Where</legend>
        <div class="checks">
          {screens.map((s) => (
            <label key={s.id}>
              <input type="checkbox" name="screenIds" value={s.id} defaultChecked={targets?.screenIds.includes(s.id)} /> {s.name}
            </label>
          ))}
          {groups.map((g) => (
            <label key={g.id}>
              <input type="checkbox" name="groupIds" value={g.id} defaultChecked={targets?.groupIds.includes(g.id)} /> Group {g.name}
            </label>
          ))}
          {locations.map((l) => (
            <label key={l.id}>
              <input type="checkbox" name="locationIds" value={l.id} defaultChecked={targets?.locationIds.includes(l.id)} /> Location {l.name}
            </label>
          ))}
          {screens.length + groups.length + locations.length === 0 && <small class="muted">Add screens first.</small>}
        </div>
        {fieldError('targets') && <small>{fieldError('targets')}</small>}
      </fieldset>
      <div class="grid">
        <label>
          Starts
          <input name="startsAt" type="datetime-local" required defaultValue={startValue} onInput={(e) => setStartValueLive(e.currentTarget.value)} />
        </label>
        <label>
          Ends
          <input name="endsAt" type="datetime-local" defaultValue={endValue} />
        </label>
        <label>
          Repeats
          <select
            name="repeat"
            value={repeat}
            onChange={(e) => {
              const next = e.currentTarget.value as Repeat;
              setRepeat(next);
              // Weekly starts with the start's weekday ticked (never none).
              if (next === 'weekly' && weekDays.length === 0) {
                const d = new Date(`${startShown}:00`);
                if (!Number.isNaN(d.getTime())) setWeekDays([DAYS[(d.getDay() + 6) % 7]!]);
              }
            }}
          >
            <option value="none">Does not repeat</option>
            <option value="daily">Every day</option>
            <option value="weekdays">Every weekday</option>
            <option value="weekly">Weekly on…</option>
            <option value="monthly">Every month (on the start’s day)</option>
            <option value="custom">Custom rule (advanced)</option>
          </select>
        </label>
      </div>
      {repeat === 'weekly' && (
        <fieldset aria-describedby={fieldError('byday') ? 'byday-error' : undefined}>
          <legend>On</legend>
          <div class="checks">
            {DAYS.map((d) => (
              <label key={d}>
                <input type="checkbox" name="byday" value={d} checked={weekDays.includes(d)} /> {DAY_LABEL[d]}
              </label>
            ))}
          </div>
          {fieldError('byday') && <small id="byday-error">{fieldError('byday')}</small>}
        </fieldset>
      )}
      {repeat === 'custom' && (
        <label>
          Repeat rule (iCalendar RRULE, for experts)
          <input name="rrule" placeholder="FREQ=MONTHLY;BYMONTHDAY=1" maxLength={1000} defaultValue={initial.custom} />
          <small>For example FREQ=MONTHLY;BYMONTHDAY=1 (the 1st of every month). The other choices cover most needs.</small>
        </label>
      )}
      <label>
        Time zone
        <select name="timeZone" value={chosenZone} onChange={(e) => setChosenZone(e.currentTarget.value)}>
          <option value="">Each screen’s own (its location’s{defaultZone ? `, else ${zoneWords(defaultZone)}` : ''})</option>
          {zones.map((z) => (
            <option key={z} value={z}>
              {zoneWords(z)}
              {z === browserZone ? ' · this browser' : ''}
              {z === defaultZone ? ' · server default' : ''}
            </option>
          ))}
        </select>
      </label>
      <ZoneNote readIn={readIn} targetZones={chosenZone ? [] : targetZones} browserZone={browserZone} hour={startHour} />
      <ErrorNote error={save.error} />
      <button type="submit" aria-busy={save.busy}>
        {schedule ? 'Save schedule' : 'Create schedule'}
      </button>
    </form>
  );
}

/** The zone the times are read in, in plain words, and a warning when it is not this browser's. */
function ZoneNote({ readIn, targetZones, browserZone, hour }: { readIn: string | null; targetZones: string[]; browserZone: string; hour: string }) {
  if (!readIn) {
    if (targetZones.length > 1)
      return (
        <p class="zone-note" data-testid="zone-note">
          Times are each screen’s local time: {targetZones.map(zoneWords).join(', ')}. {hour} means {hour} where each screen is.
        </p>
      );
    return (
      <p class="zone-note muted" data-testid="zone-note">
        Times are each screen’s local time (choose where it plays to see which).
      </p>
    );
  }
  const diff = offsetMinutes(readIn) - offsetMinutes(browserZone);
  const here = (() => {
    const [h, m] = hour.split(':').map(Number);
    if (!Number.isFinite(h) || !Number.isFinite(m)) return null;
    const total = (((h! * 60 + m! - diff) % 1440) + 1440) % 1440;
    return `${String(Math.floor(total / 60)).padStart(2, '0')}:${String(total % 60).padStart(2, '0')}`;
  })();
  return (
    <p class="zone-note" data-testid="zone-note">
      Times are in <strong>{zoneWords(readIn)}</strong>.
      {diff !== 0 && (
        <span class="zone-warning" role="note" data-testid="zone-warning">
          {' '}
          This browser is in {zoneWords(browserZone)},{' '}
          {Math.abs(diff) >= 60 ? `${Math.round((Math.abs(diff) / 60) * 10) / 10} hour${Math.abs(diff) === 60 ? '' : 's'}` : `${Math.abs(diff)} minutes`}{' '}
          {diff > 0 ? 'behind' : 'ahead'}: {hour} there is {here ?? '—'} here.
        </span>
      )}
    </p>
  );
}

const SOURCE_CLASS: Record<string, string> = {
  schedule: 'seg-schedule',
  assignment: 'seg-assignment',
  'group-assignment': 'seg-assignment',
  idle: 'seg-idle',
  takeover: 'seg-takeover',
  override: 'seg-takeover',
  alert: 'seg-takeover',
};

/** Local midnight of the day `d` falls in. */
function startOfDay(d: Date): Date {
  const x = new Date(d);
  x.setHours(0, 0, 0, 0);
  return x;
}
/** Monday (local) of the week `d` falls in. */
function startOfWeek(d: Date): Date {
  const x = startOfDay(d);
  x.setDate(x.getDate() - ((x.getDay() + 6) % 7));
  return x;
}
/** `days` calendar days later (local midnights, so DST days count as one). */
function addDays(d: Date, days: number): Date {
  const x = new Date(d);
  x.setDate(x.getDate() + days);
  return x;
}
function dayKey(d: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}
const shortTime = (ms: number) => new Date(ms).toLocaleTimeString([], { timeStyle: 'short' });

/** The days a view covers: a week from Monday, or the whole weeks around a month (at most 6 x 7 = 42 days). */
function viewRange(view: 'week' | 'month', anchor: Date): { days: Date[]; monthStart: Date } {
  const monthStart = new Date(anchor.getFullYear(), anchor.getMonth(), 1);
  if (view === 'week') {
    const first = startOfWeek(anchor);
    return { days: Array.from({ length: 7 }, (_, i) => addDays(first, i)), monthStart };
  }
  const first = startOfWeek(monthStart);
  const monthEnd = new Date(anchor.getFullYear(), anchor.getMonth() + 1, 1);
  const days: Date[] = [];
  for (let d = first; d < monthEnd || days.length % 7 !== 0; d = addDays(d, 1)) days.push(d);
  return { days, monthStart };
}

/** "What plays on this screen": the resolved week or month, from the server's preview (recurrences expanded there). */
function Preview({ screens, groups, version }: { screens: Screen[]; groups: Group[]; version: unknown }) {
  const [target, setTarget] = useState('');
  const [view, setView] = useState<'week' | 'month'>('week');
  const [anchor, setAnchor] = useState(() => startOfDay(new Date()));
  const { days, monthStart } = viewRange(view, anchor);
  const start = days[0]!;
  const end = addDays(days[days.length - 1]!, 1);
  const chosen = target || (screens[0] ? `screen:${screens[0].id}` : '');
  const rangeKey = `${chosen}|${start.getTime()}|${end.getTime()}`;
  const preview = useLoad(async () => {
    if (!chosen) return null;
    const [kind, id] = chosen.split(':');
    const res = await api.post<{ timeline: Segment[]; timeZone: string }>('schedules/preview', {
      [kind === 'group' ? 'groupId' : 'screenId']: id,
      from: start.toISOString(),
      to: end.toISOString(),
    });
    return { ...res, rangeKey };
  }, [chosen, start.getTime(), end.getTime(), version]);
  // While the next range loads, the previous answer is not drawn on the new days.
  const segs = preview.data?.rangeKey === rangeKey ? preview.data.timeline : [];
  const move = (step: number) => setAnchor(view === 'week' ? addDays(anchor, 7 * step) : new Date(anchor.getFullYear(), anchor.getMonth() + step, 1));
  const unit = view === 'week' ? 'week' : 'month';
  const title =
    view === 'week'
      ? `${start.toLocaleDateString(undefined, { day: 'numeric', month: 'short' })} – ${addDays(end, -1).toLocaleDateString(undefined, { day: 'numeric', month: 'short', year: 'numeric' })}`
      : monthStart.toLocaleDateString(undefined, { month: 'long', year: 'numeric' });
  const inDay = (d: Date) => {
    const a = d.getTime();
    const b = addDays(d, 1).getTime();
    return { a, b, list: segs.filter((s) => Date.parse(s.startsAt) < b && Date.parse(s.endsAt) > a) };
  };
  const labelOf = (s: Segment) => s.content?.name ?? (s.source.type === 'idle' ? 'idle slide' : s.source.type);
  return (
    <article aria-labelledby="preview-h">
      <header class="row spread">
        <h2 id="preview-h">What plays</h2>
        <div class="row preview-controls">
          <select aria-label="Preview for" value={chosen} onChange={(e) => setTarget(e.currentTarget.value)}>
            {screens.map((s) => (
              <option key={s.id} value={`screen:${s.id}`}>
                {s.name}
              </option>
            ))}
            {groups.map((g) => (
              <option key={g.id} value={`group:${g.id}`}>
                Group {g.name}
              </option>
            ))}
          </select>
          <div role="group" class="view-toggle" aria-label="Calendar view">
            {(['week', 'month'] as const).map((v) => (
              <button key={v} type="button" class={`small ${view === v ? '' : 'secondary outline'}`} aria-pressed={view === v} onClick={() => setView(v)}>
                {v === 'week' ? 'Week' : 'Month'}
              </button>
            ))}
          </div>
          <button type="button" class="secondary outline small" aria-label={`Previous ${unit}`} onClick={() => move(-1)}>
            ←
          </button>
          <button type="button" class="secondary outline small" onClick={() => setAnchor(startOfDay(new Date()))}>
            Today
          </button>
          <button type="button" class="secondary outline small" aria-label={`Next ${unit}`} onClick={() => move(1)}>
            →
          </button>
        </div>
      </header>
      <p class="preview-title" aria-live="polite">
        <strong>{title}</strong>
      </p>
      {!chosen && <p class="muted">Add a screen to see what it will play.</p>}
      <ErrorNote error={preview.error} />
      {chosen && view === 'week' && (
        <div class="week" role="table" aria-label="Week preview">
          {days.map((d) => {
            const { a: dayStart, b: dayEnd, list } = inDay(d);
            return (
              <div class="week-day" role="row" key={dayStart}>
                <div class="week-head" role="rowheader">
                  {d.toLocaleDateString(undefined, { weekday: 'short', day: 'numeric', month: 'short' })}
                </div>
                <div class="week-col">
                  {list.map((s, i) => {
                    const from = Math.max(Date.parse(s.startsAt), dayStart);
                    const to = Math.min(Date.parse(s.endsAt), dayEnd);
                    const top = ((from - dayStart) / (dayEnd - dayStart)) * 100;
                    const height = Math.max(((to - from) / (dayEnd - dayStart)) * 100, 1.5);
                    const label = labelOf(s);
                    return (
                      <div
                        key={i}
                        role="cell"
                        class={`seg ${SOURCE_CLASS[s.source.type] ?? ''}`}
                        style={{ top: `${top}%`, height: `${height}%` }}
                        title={`${shortTime(from)}–${shortTime(to)}: ${label} (${s.reason})`}
                      >
                        <span>{label}</span>
                      </div>
                    );
                  })}
                </div>
              </div>
            );
          })}
        </div>
      )}
      {chosen && view === 'month' && (
        <MonthGrid
          days={days}
          month={monthStart.getMonth()}
          label={`Month preview, ${title}`}
          dayOf={inDay}
          labelOf={labelOf}
          onWeek={(d) => {
            setAnchor(d);
            setView('week');
          }}
        />
      )}
      <p class="legend">
        <span class="seg-key seg-schedule" /> schedule <span class="seg-key seg-assignment" /> default playlist <span class="seg-key seg-idle" /> idle slide{' '}
        <span class="seg-key seg-takeover" /> takeover / override
        {preview.data && <small class="muted"> · times in this browser’s zone; the screen uses {preview.data.timeZone}</small>}
        {view === 'month' && <small class="muted"> · the month lists scheduled times; the rest of each day plays the default</small>}
      </p>
    </article>
  );
}

/** The month: one cell per day listing its schedule occurrences (times and playlist); a day's number opens its week. */
function MonthGrid({
  days,
  month,
  label,
  dayOf,
  labelOf,
  onWeek,
}: {
  days: Date[];
  month: number;
  label: string;
  dayOf: (d: Date) => { a: number; b: number; list: Segment[] };
  labelOf: (s: Segment) => string;
  onWeek: (d: Date) => void;
}) {
  const today = dayKey(new Date());
  const weeks = Array.from({ length: days.length / 7 }, (_, i) => days.slice(i * 7, i * 7 + 7));
  return (
    <table class="month" aria-label={label}>
      <thead>
        <tr>
          {days.slice(0, 7).map((d) => (
            <th scope="col" key={d.getDay()}>
              <abbr title={d.toLocaleDateString(undefined, { weekday: 'long' })}>{d.toLocaleDateString(undefined, { weekday: 'short' })}</abbr>
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {weeks.map((week) => (
          <tr key={dayKey(week[0]!)}>
            {week.map((d) => {
              const { a, b, list } = dayOf(d);
              const key = dayKey(d);
              // Scheduled (and stronger) segments are the day's occurrences; default playlist and idle fill the rest.
              const occ = list.filter((s) => s.source.type !== 'assignment' && s.source.type !== 'group-assignment' && s.source.type !== 'idle');
              const outside = d.getMonth() !== month;
              return (
                <td
                  key={key}
                  data-date={key}
                  class={`${outside ? 'outside' : ''} ${key === today ? 'today' : ''} ${occ.length ? '' : 'empty'}`}
                  aria-current={key === today ? 'date' : undefined}
                >
                  <button
                    type="button"
                    class="link-button day-num"
                    aria-label={`Week of ${d.toLocaleDateString(undefined, { weekday: 'long', day: 'numeric', month: 'long' })}`}
                    onClick={() => onWeek(d)}
                  >
                    <span class="day-long">{d.toLocaleDateString(undefined, { weekday: 'short', day: 'numeric', month: 'short' })}</span>
                    <span class="day-short">{d.getDate()}</span>
                  </button>
                  <ul>
                    {occ.map((s, i) => {
                      const from = Math.max(Date.parse(s.startsAt), a);
                      const to = Math.min(Date.parse(s.endsAt), b);
                      const allDay = from === a && to === b;
                      return (
                        <li key={i} class={`occ ${SOURCE_CLASS[s.source.type] ?? ''}`} title={s.reason} data-schedule={s.source.name ?? undefined}>
                          <span class="occ-time">{allDay ? 'all day' : `${shortTime(from)}–${shortTime(to)}`}</span> <span class="occ-name">{labelOf(s)}</span>
                        </li>
                      );
                    })}
                  </ul>
                </td>
              );
            })}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
