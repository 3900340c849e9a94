import { useState } from 'preact/hooks';
import { api } from '../api';
import type { Group, Screen } from '../types';
import { ErrorNote, useLoad } from '../ui';
import type { ScheduleSegment as Segment } from '../types';

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
export function Preview({ screens, groups, version }: { screens: Screen[]; groups: Group[]; version: unknown }) {
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
