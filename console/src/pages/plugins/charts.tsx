import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

/**
 * The noise report's charts, drawn by uPlot (a small canvas chart library kept as a dependency):
 * the level series with gaps left as gaps (no data is not zero), and daily bars. Times are drawn
 * in the report's time zone.
 */

export interface SeriesPoint {
  startsAt: string;
  averageLevel: number | null;
  peakLevel: number | null;
}

const AVERAGE = '#2f6fde';
const PEAK = '#d7263d';
const BARS = '#f0a500';

function ink(): string {
  return getComputedStyle(document.body).color || '#444';
}

/** Draws `make(width)` into the div, again when the div's width changes; destroys it on unmount. */
function useChart(make: (el: HTMLDivElement, width: number) => uPlot, deps: unknown[]) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    let chart = make(el, Math.max(280, el.clientWidth));
    const observer = new ResizeObserver(() => {
      const w = Math.max(280, el.clientWidth);
      if (Math.abs(w - chart.width) > 4) chart.setSize({ width: w, height: chart.height });
    });
    observer.observe(el);
    return () => {
      observer.disconnect();
      chart.destroy();
      chart = undefined as unknown as uPlot;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);
  return ref;
}

const zoned = (timeZone: string) => (ts: number) => uPlot.tzDate(new Date(ts * 1000), timeZone);

export function LevelChart({ points, timeZone, label }: { points: SeriesPoint[]; timeZone: string; label: string }) {
  const ref = useChart(
    (el, width) => {
      const xs = points.map((p) => Date.parse(p.startsAt) / 1000);
      const data: uPlot.AlignedData = [xs, points.map((p) => p.averageLevel), points.map((p) => p.peakLevel)];
      const axis = { stroke: ink(), grid: { stroke: '#8884' }, ticks: { stroke: '#8884' } };
      return new uPlot(
        {
          width,
          height: 260,
          tzDate: zoned(timeZone),
          scales: { y: { range: [0, 100] } },
          series: [
            {},
            { label: 'Average', stroke: AVERAGE, width: 2, spanGaps: false, points: { show: points.length < 80 } },
            { label: 'Peak', stroke: PEAK, width: 1, dash: [4, 3], spanGaps: false, points: { show: false } },
          ],
          axes: [axis, { ...axis, label: 'Level (0-100)' }],
        },
        data,
        el,
      );
    },
    [points, timeZone],
  );
  return <div ref={ref} class="chart" role="img" aria-label={label} data-testid="series-chart" />;
}

export interface DailyBar {
  date: string;
  value: number | null;
}

export function DailyChart({ days, label, yLabel }: { days: DailyBar[]; label: string; yLabel: string }) {
  const ref = useChart(
    (el, width) => {
      // One bar per local day, at the day's noon UTC (the axis shows dates only).
      const xs = days.map((d) => Date.parse(`${d.date}T12:00:00Z`) / 1000);
      const axis = { stroke: ink(), grid: { stroke: '#8884' }, ticks: { stroke: '#8884' } };
      return new uPlot(
        {
          width,
          height: 220,
          tzDate: zoned('UTC'),
          scales: { x: { time: true, range: (_u, min, max) => [min - 43_200, max + 43_200] }, y: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.1] } },
          series: [{}, { label: yLabel, fill: BARS, stroke: BARS, paths: uPlot.paths.bars?.({ size: [0.6, 60] }), points: { show: false } }],
          axes: [
            // One tick per bar (its date), every n-th when the days are many.
            {
              ...axis,
              splits: (u) => xs.filter((_x, i) => i % Math.max(1, Math.ceil(xs.length / Math.max(1, Math.floor(u.width / 70)))) === 0),
              values: (_u, ticks) => ticks.map((t) => new Date(t * 1000).toISOString().slice(5, 10)),
            },
            { ...axis, label: yLabel },
          ],
          legend: { show: false },
        },
        [xs, days.map((d) => d.value)],
        el,
      );
    },
    [days, yLabel],
  );
  return <div ref={ref} class="chart" role="img" aria-label={label} data-testid="daily-chart" />;
}
