/**
 * Widget compile (issue 19): a 500-row menu board (table type: grouped by course, money
 * formatted per column, paged) compiled into its bundle by our compiler — settings data
 * prepared, rendered by liquidjs with the limits, wrapped in the bundle document — against
 * liquidjs alone (default options) rendering the same template with the same data already
 * prepared. Prints the medians and the ratio.
 *   npm run bench:widgets [-- --rows 500 --runs 50]
 */
import { Liquid } from 'liquidjs';
import { compileWidget, prepare } from '../../server/src/modules/widgets/compiler.js';
import { SETTINGS, TEMPLATES } from '../../server/src/modules/widgets/types.js';

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const ROWS = arg('rows', 500);
const RUNS = arg('runs', 50);
const courses = ['Starters', 'Mains', 'Desserts', 'Drinks', 'Sides'];
const rows = Array.from({ length: ROWS }, (_, i) => ({
  Dish: `Dish number ${i}`,
  Course: courses[i % courses.length],
  Price: 3 + (i % 40) * 0.5,
  Vegan: i % 3 === 0,
}));
const columns = [
  { name: 'Dish', type: 'text' },
  { name: 'Course', type: 'text' },
  { name: 'Price', type: 'number' },
  { name: 'Vegan', type: 'boolean' },
];
const settings = SETTINGS.table.parse({
  title: 'Menu',
  columns: [{ name: 'Dish' }, { name: 'Vegan', heading: 'V' }, { name: 'Price', format: { type: 'money', currency: 'EUR', decimals: 2 } }],
  groupBy: 'Course',
  rowsPerPage: 20,
}) as Record<string, unknown>;
const data = { columns, rows, sourceName: 'Menu' };
const now = new Date();

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
async function time(fn: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < 5; i++) await fn(); // warm up
  const out: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out;
}

let size = 0;
const ours = await time(async () => {
  const r = await compileWidget({ type: 'table', settings, template: null, data, now });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  size = Buffer.byteLength(r.html);
});
const plain = new Liquid();
const scope = { settings, rows, columns, now: now.toISOString(), source: 'Menu', ...(await prepare('table', settings, data)) };
const alone = await time(() => plain.parseAndRender(TEMPLATES.table, scope));
const [a, b] = [median(ours), median(alone)];
console.log(`menu board: ${ROWS} rows, bundle ${(size / 1024).toFixed(1)} KiB, ${RUNS} runs`);
console.log(`our compile (prepare + render with limits + sanitise/wrap): median ${a.toFixed(2)} ms`);
console.log(`liquidjs alone, same template and prepared data:          median ${b.toFixed(2)} ms`);
console.log(`ratio: ${(a / b).toFixed(2)}x`);
