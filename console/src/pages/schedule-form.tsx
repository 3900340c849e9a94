import { DraftBar, HistoryPanel } from '../ui/publishing';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../api';
import type { Group, LayoutSummary, Location, PlaylistSummary, Screen } from '../types';
import { ErrorNote, formValues, useAction } from '../ui';
import type { Schedule } from '../types';
import { DAY_LABEL, DAYS, offsetMinutes, type Repeat, repeatOf, wallClock, zoneWords } from './schedule-rules';

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
export function EditSchedule({ schedule, onDone, ...lists }: FormProps & { schedule: Schedule; onDone: (saved: Schedule | null) => Promise<void> }) {
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
      <DraftBar type="schedule" id={schedule.id} publication={schedule.publication} canEdit />
      <HistoryPanel type="schedule" id={schedule.id} refresh={schedule.publication?.number} />
    </article>
  );
}

/**
 * New or existing schedule: what plays (a playlist or a published layout), where, when,
 * how it repeats, in which zone, priority. Local times are read by the server in the
 * chosen zone (or each screen's own).
 */
export function ScheduleForm({
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
