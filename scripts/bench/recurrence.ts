/**
 * Recurrence expansion on the worst rules the checks allow (issue 15): for each rule of
 * test/helpers/fuzz/recurrence.ts, the time to check it as a save does, then to expand it
 * over a manifest's window (48 h, twice) and a preview's (62 days), with the periods walked
 * and the occurrences answered; then the timeline of all of them together over 62 days.
 * With --refused, also times the rules the checks refuse as rrule alone expands them over
 * a manifest's window (what the checks spare the server).
 *   npm run bench:recurrence [-- --refused]
 */
import { Worker } from 'node:worker_threads';
import { checkSeries, expand, resolveTimeline, type ScheduleInput } from '../../server/src/modules/schedules/index.js';
import { REFUSED, WORST_ALLOWED } from '../../test/helpers/fuzz/recurrence.js';

const DAY = 86_400_000;
const now = Date.now();
const from = Math.floor(now / 3_600_000) * 3_600_000;
const ms = (t0: number) => (performance.now() - t0).toFixed(1);
const pad = (s: string | number, n: number) => String(s).padEnd(n);

const inputs: ScheduleInput[] = [];
console.log(
  `${pad('rule', 46)} ${pad('check ms', 9)} ${pad('48h ms', 7)} ${pad('again', 6)} ${pad('periods', 8)} ${pad('occ', 6)} ${pad('62d ms', 7)} ${pad('periods', 8)} occ`,
);
for (const [i, w] of WORST_ALLOWED.entries()) {
  const input: ScheduleInput = {
    id: `s${i}`,
    content: { type: 'playlist', id: `p${i}` },
    startsAt: w.startsAt,
    endsAt: new Date(Date.parse(w.startsAt) + w.durationMs).toISOString(),
    rrule: w.rrule,
    timeZone: 'Europe/London',
    priority: i,
    enabled: true,
    updatedAt: new Date(now).toISOString(),
  };
  inputs.push(input);
  // Warm up the JIT and the zone's offsets on another rule, so the figures are the rule's own.
  if (i === 0) for (let k = 0; k < 20; k++) expand({ ...input, rrule: 'FREQ=DAILY' }, from, from + 62 * DAY);
  let t = performance.now();
  checkSeries({ startsAt: input.startsAt, endsAt: input.endsAt!, rrule: input.rrule!, timeZone: input.timeZone });
  const check = ms(t);
  t = performance.now();
  const day2 = expand(input, from, from + 2 * DAY);
  const cold = ms(t);
  t = performance.now();
  expand(input, from, from + 2 * DAY);
  const warm = ms(t);
  t = performance.now();
  const day62 = expand(input, from, from + 62 * DAY);
  const long = ms(t);
  if (day2.truncated || day62.truncated) throw new Error(`${w.name}: truncated`);
  console.log(
    `${pad(w.name, 46)} ${pad(check, 9)} ${pad(cold, 7)} ${pad(warm, 6)} ${pad(day2.periods, 8)} ${pad(day2.occurrences.length, 6)} ${pad(long, 7)} ${pad(day62.periods, 8)} ${day62.occurrences.length}`,
  );
}
const t = performance.now();
const timeline = resolveTimeline({ schedules: inputs }, from, from + 62 * DAY);
console.log(`timeline of all ${inputs.length} over 62 days: ${timeline.length} segments in ${ms(t)} ms`);

if (process.argv.includes('--refused')) {
  // Each in a worker thread with a deadline: some never end (FREQ=HOURLY;INTERVAL=2;BYHOUR=1
  // loops forever inside rrule).
  console.log('\nrefused rules as rrule alone expands them over the next 48 h from a start in 2016 (what the checks prevent; 10 s cap):');
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    const { rrulestr } = require('rrule');
    const r = rrulestr('RRULE:' + workerData.rule, { dtstart: new Date(Date.UTC(2016, 0, 1, 9)) });
    const t = performance.now();
    let n = 0;
    r.between(new Date(workerData.from), new Date(workerData.from + 2 * 86400000), true, () => ++n < 100000);
    parentPort.postMessage({ ms: performance.now() - t, n });`;
  for (const rule of REFUSED) {
    const worker = new Worker(code, { eval: true, workerData: { rule, from } });
    const answer = await new Promise<string>((resolve) => {
      const timer = setTimeout(() => resolve('still running after 10 s (stopped)'), 10_000);
      worker.once('message', (m: { ms: number; n: number }) => resolve(`${m.ms.toFixed(1)} ms, ${m.n} occurrences`));
      worker.once('error', (err) => resolve(`rrule refuses it too (${err.message.slice(0, 40)})`));
      worker.once('exit', () => clearTimeout(timer));
    });
    await worker.terminate();
    console.log(`${pad(rule.slice(0, 60), 62)} ${answer}`);
  }
}
