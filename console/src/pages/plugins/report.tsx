import { useMemo, useState } from 'preact/hooks';
import { api, qs } from '../../api';
import { ErrorNote, useLoad, useTitle } from '../../ui';
import { formatDuration } from '../../ui/fields';
import { TIME_ZONES } from '../places';
import { offsetMinutes, wallClock } from '../schedule-rules';
import { DailyChart, LevelChart } from './charts';
import { type Instance, instancesPath } from './model';
import type { DailyRow, ScreenRow, SeriesAnswer, Summary } from './report-model';

/**
 * A noise meter's history report (docs/console-plugins.md): a date range in a time zone, the
 * summary figures, the level series (gaps are gaps), daily bars, the per-screen table (sorted by
 * the server) and a CSV download of the same range.
 */

const BROWSER_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

/** The instant a local date (YYYY-MM-DD) starts in `zone`, as ISO (DST-safe: the offset is checked at the result). */
export function zonedStart(date: string, zone: string): string {
  const wall = Date.parse(`${date}T00:00:00Z`);
  let t = wall - offsetMinutes(zone, new Date(wall)) * 60_000;
  t = wall - offsetMinutes(zone, new Date(t)) * 60_000;
  return new Date(t).toISOString();
}
const addDays = (date: string, n: number) => new Date(Date.parse(`${date}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
const today = (zone: string) => wallClock(new Date().toISOString(), zone).slice(0, 10);

const level = (n: number | null | undefined) => (n === null || n === undefined ? '—' : (Math.round(n * 10) / 10).toString());
const duration = (ms: number | null | undefined) => (ms ? formatDuration(ms / 1000) : '0 seconds');
const percent = (share: number | null | undefined) => (share === null || share === undefined ? '—' : `${Math.round(share * 1000) / 10}%`);

const RESOLUTIONS = [
  { value: 'auto', label: 'Automatic' },
  { value: '10s', label: '10 seconds' },
  { value: '1m', label: '1 minute' },
  { value: '5m', label: '5 minutes' },
  { value: '1h', label: '1 hour' },
  { value: '1d', label: '1 day' },
];

/** The columns; those with `sort` are sorted by the server (its `sort` values). */
type SortKey = 'name' | 'averageLevel' | 'peakLevel' | 'loudMs' | 'triggerCount' | 'coverage';
const COLUMNS: { label: string; sort?: SortKey }[] = [
  { label: 'Screen', sort: 'name' },
  { label: 'Monitored' },
  { label: 'Coverage', sort: 'coverage' },
  { label: 'Average', sort: 'averageLevel' },
  { label: 'Peak', sort: 'peakLevel' },
  { label: 'Warning' },
  { label: 'Loud', sort: 'loudMs' },
  { label: 'Times loud', sort: 'triggerCount' },
];

export function NoiseReportPage({ id }: { id: string }) {
  const instance = useLoad(() => api.get<Instance<'noise-meter'>>(`${instancesPath('noise-meter')}/${id}`), [id]);
  useTitle(instance.data ? `Noise report: ${instance.data.name}` : 'Noise report');
  const [zone, setZone] = useState(BROWSER_ZONE);
  const [to, setTo] = useState(() => today(BROWSER_ZONE));
  const [from, setFrom] = useState(() => addDays(today(BROWSER_ZONE), -6));
  const [resolution, setResolution] = useState('auto');
  const [sort, setSort] = useState<{ key: SortKey; order: 'asc' | 'desc' }>({ key: 'averageLevel', order: 'desc' });
  const valid = Boolean(from && to && from <= to);
  const range = useMemo(() => (valid ? { from: zonedStart(from, zone), to: zonedStart(addDays(to, 1), zone), timeZone: zone } : null), [from, to, zone, valid]);
  const base = `${instancesPath('noise-meter')}/${id}/history`;
  const key = range ? qs(range) : '';
  const skip = () => Promise.resolve(null);
  const summary = useLoad(() => (range ? api.get<Summary>(`${base}/summary${key}`) : skip()), [key]);
  const series = useLoad(() => (range ? api.get<SeriesAnswer>(`${base}/series${qs({ ...range, resolution })}`) : skip()), [key, resolution]);
  const daily = useLoad(() => (range ? api.get<{ days: DailyRow[] } | DailyRow[]>(`${base}/daily${key}`) : skip()), [key]);
  const screens = useLoad(
    () => (range ? api.get<{ screens: ScreenRow[] } | ScreenRow[]>(`${base}/screens${qs({ ...range, sort: sort.key, order: sort.order })}`) : skip()),
    [key, sort.key, sort.order],
  );
  const days = daily.data ? (Array.isArray(daily.data) ? daily.data : daily.data.days) : [];
  const rows = screens.data ? (Array.isArray(screens.data) ? screens.data : screens.data.screens) : [];
  const s = summary.data;
  const csv = range ? `/api/v1/${base}/export.csv${qs({ ...range, resolution })}` : '';
  const dailyCsv = range ? `/api/v1/${base}/export.csv${qs({ ...range, what: 'daily' })}` : '';
  const screensCsv = range ? `/api/v1/${base}/export.csv${qs({ ...range, what: 'screens' })}` : '';
  const name = instance.data?.name ?? 'Noise meter';
  return (
    <>
      <p>
        <a href="/plugins/noise-meter">← Noise meter</a>
        {instance.data && (
          <>
            {' · '}
            <a href={`/plugins/noise-meter/instances/${id}`}>Settings of {name}</a>
          </>
        )}
      </p>
      <hgroup>
        <h1>Noise report: {name}</h1>
        <p>Levels are relative (0 quiet, 100 very loud), measured by the screens this meter shows on. Times without data are gaps, not quiet.</p>
      </hgroup>
      <ErrorNote error={instance.error} />
      <form class="report-range grid" aria-label="Report range" onSubmit={(e) => e.preventDefault()}>
        <label>
          From
          <input type="date" value={from} max={to} onInput={(e) => e.currentTarget.value && setFrom(e.currentTarget.value)} />
        </label>
        <label>
          To
          <input type="date" value={to} min={from} onInput={(e) => e.currentTarget.value && setTo(e.currentTarget.value)} />
        </label>
        <label>
          Time zone
          <select value={zone} onChange={(e) => setZone(e.currentTarget.value)}>
            {(TIME_ZONES.includes(zone) ? TIME_ZONES : [zone, ...TIME_ZONES]).map((z) => (
              <option key={z} value={z}>
                {z}
              </option>
            ))}
          </select>
        </label>
      </form>
      {!valid && (
        <p class="field-error" role="alert">
          The start date must not be after the end date.
        </p>
      )}
      {range && (
        <p class="row report-downloads">
          <a href={csv} download data-testid="csv-link" role="button" class="secondary outline">
            Download CSV (levels over time)
          </a>
          <a href={dailyCsv} download data-testid="csv-daily-link" role="button" class="secondary outline">
            Download CSV (one row a day)
          </a>
          <a href={screensCsv} download data-testid="csv-screens-link" role="button" class="secondary outline">
            Download CSV (by screen)
          </a>
        </p>
      )}
      <ErrorNote error={summary.error} />
      {s && (
        <section aria-labelledby="summary-h">
          <h2 id="summary-h">Summary</h2>
          <dl class="report-figures" data-testid="summary">
            <div data-figure="monitored">
              <dt>Monitored</dt>
              <dd>{duration(s.monitoredMs)}</dd>
            </div>
            <div data-figure="coverage">
              <dt>Coverage</dt>
              <dd>{percent(s.coverage)}</dd>
            </div>
            <div data-figure="average">
              <dt>Average level</dt>
              <dd>{level(s.averageLevel)}</dd>
            </div>
            <div data-figure="peak">
              <dt>Peak level</dt>
              <dd>{level(s.peakLevel)}</dd>
            </div>
            <div data-figure="warning">
              <dt>In warning</dt>
              <dd>{duration(s.warningMs)}</dd>
            </div>
            <div data-figure="loud">
              <dt>Loud</dt>
              <dd>{duration(s.loudMs)}</dd>
            </div>
            <div data-figure="triggers">
              <dt>Times it got loud</dt>
              <dd>{s.triggerCount ?? 0}</dd>
            </div>
          </dl>
          {(s.loudestPeriods?.length ?? 0) > 0 && (
            <>
              <h3>Loudest periods</h3>
              <ol class="loudest" data-testid="loudest">
                {s.loudestPeriods!.map((p) => (
                  <li key={p.startsAt}>
                    {wallClock(p.startsAt, zone).replace('T', ' ')}
                    {p.endsAt ? ` to ${wallClock(p.endsAt, zone).slice(11)}` : ''}: average {level(p.averageLevel)}, peak {level(p.peakLevel)}
                  </li>
                ))}
              </ol>
            </>
          )}
        </section>
      )}
      <section aria-labelledby="series-h">
        <div class="row section-head">
          <h2 id="series-h">Levels over time</h2>
          <label class="inline">
            Resolution{' '}
            <select value={resolution} onChange={(e) => setResolution(e.currentTarget.value)}>
              {RESOLUTIONS.map((r) => (
                <option key={r.value} value={r.value}>
                  {r.label}
                </option>
              ))}
            </select>
          </label>
        </div>
        <ErrorNote error={series.error} />
        {series.data && (
          <>
            <small class="muted" data-testid="series-resolution">
              {series.data.points.length} points, every {RESOLUTIONS.find((r) => r.value === series.data!.resolution)?.label ?? series.data.resolution}.
            </small>
            <LevelChart points={series.data.points} timeZone={zone} label={`Average and peak level from ${from} to ${to}, ${zone}`} />
          </>
        )}
      </section>
      <section aria-labelledby="daily-h">
        <h2 id="daily-h">Day by day</h2>
        <ErrorNote error={daily.error} />
        {days.length > 0 && (
          <>
            <DailyChart
              days={days.map((d) => ({ date: d.date, value: d.monitoredMs ? d.loudMs / 60_000 : null }))}
              label="Minutes loud per day"
              yLabel="Minutes loud"
            />
            <div class="table-wrap">
              <table class="striped plugin-table" data-testid="daily">
                <thead>
                  <tr>
                    <th scope="col">Day</th>
                    <th scope="col">Average</th>
                    <th scope="col">Peak</th>
                    <th scope="col">Loud</th>
                    <th scope="col">Busiest hour</th>
                  </tr>
                </thead>
                <tbody>
                  {days.map((d) => (
                    <tr key={d.date}>
                      <td>
                        {d.date}
                        {d.hours !== 24 && <small class="muted"> ({d.hours} hours: clocks changed)</small>}
                      </td>
                      <td data-label="Average">{level(d.averageLevel)}</td>
                      <td data-label="Peak">{level(d.peakLevel)}</td>
                      <td data-label="Loud">{duration(d.loudMs)}</td>
                      <td data-label="Busiest hour">{d.busiestHour ? `from ${d.busiestHour.slice(11, 16)}` : '—'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </>
        )}
      </section>
      <section aria-labelledby="screens-h">
        <h2 id="screens-h">By screen</h2>
        <ErrorNote error={screens.error} />
        {screens.data && rows.length === 0 && <p class="muted">No screen reported noise in this range.</p>}
        {rows.length > 0 && (
          <div class="table-wrap">
            <table class="striped plugin-table" data-testid="screens-table">
              <thead>
                <tr>
                  {COLUMNS.map((c) => {
                    const key = c.sort;
                    if (!key)
                      return (
                        <th key={c.label} scope="col">
                          {c.label}
                        </th>
                      );
                    const on = sort.key === key;
                    return (
                      <th key={c.label} scope="col" aria-sort={on ? (sort.order === 'asc' ? 'ascending' : 'descending') : undefined}>
                        <button
                          type="button"
                          class="sort-button"
                          onClick={() =>
                            setSort((x) => ({ key, order: x.key === key ? (x.order === 'desc' ? 'asc' : 'desc') : key === 'name' ? 'asc' : 'desc' }))
                          }
                        >
                          {c.label}
                          <span aria-hidden="true">{on ? (sort.order === 'asc' ? ' ▲' : ' ▼') : ''}</span>
                        </button>
                      </th>
                    );
                  })}
                </tr>
              </thead>
              <tbody>
                {rows.map((r) => (
                  <tr key={r.screenId} data-screen={r.name}>
                    <td>
                      <a href={`/screens/${r.screenId}`}>{r.name}</a>
                    </td>
                    <td data-label="Monitored">{duration(r.monitoredMs)}</td>
                    <td data-label="Coverage">{percent(r.coverage)}</td>
                    <td data-label="Average">{level(r.averageLevel)}</td>
                    <td data-label="Peak">{level(r.peakLevel)}</td>
                    <td data-label="Warning">{duration(r.warningMs)}</td>
                    <td data-label="Loud">{duration(r.loudMs)}</td>
                    <td data-label="Times loud">{r.triggerCount}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  );
}
