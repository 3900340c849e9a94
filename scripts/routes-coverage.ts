/**
 * How much of the spec's route list (docs/spec/routes.tsv) this server implements:
 * a route counts when it is registered, which in Placard means defined with a handler.
 * Prints a table per spec section, the totals, and the missing routes.
 *   npm run routes:coverage            table + missing list
 *   npm run routes:coverage -- --json  machine-readable
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROUTES } from '../server/src/routes.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export interface SpecRoute {
  method: string;
  path: string;
  section: string;
}

export function readSpecRoutes(file = path.join(root, 'docs/spec/routes.tsv')): SpecRoute[] {
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .slice(1)
    .filter((l) => l.trim());
  return lines.map((line) => {
    const [method, p, section] = line.split('\t');
    return { method: method!.trim(), path: p!.trim(), section: (section ?? '').trim() };
  });
}

/** Parameter names do not matter for matching: `/a/{id}` is `/a/{x}`. */
const shape = (method: string, p: string) => `${method} ${p.replace(/\{[^}]+\}/g, '{}')}`;

export function coverage(spec: SpecRoute[], implemented: { method: string; path: string }[]) {
  const have = new Set(implemented.map((r) => shape(r.method, r.path)));
  // Every GET route answers HEAD too (same headers, no body).
  for (const r of implemented) if (r.method === 'GET') have.add(shape('HEAD', r.path));
  const sections = new Map<string, { total: number; done: number }>();
  const missing: SpecRoute[] = [];
  for (const r of spec) {
    const s = sections.get(r.section) ?? { total: 0, done: 0 };
    s.total++;
    if (have.has(shape(r.method, r.path))) s.done++;
    else missing.push(r);
    sections.set(r.section, s);
  }
  const specShapes = new Set(spec.map((r) => shape(r.method, r.path)));
  const extensions = implemented.filter((r) => !specShapes.has(shape(r.method, r.path)));
  const done = spec.length - missing.length;
  return { total: spec.length, done, sections, missing, extensions };
}

function main() {
  const spec = readSpecRoutes();
  const result = coverage(spec, [...ROUTES]);
  if (process.argv.includes('--json')) {
    console.log(
      JSON.stringify(
        {
          total: result.total,
          implemented: result.done,
          sections: Object.fromEntries(result.sections),
          missing: result.missing,
          extensions: result.extensions.map((r) => `${r.method} ${r.path}`),
        },
        null,
        2,
      ),
    );
    return;
  }
  const width = Math.max(...[...result.sections.keys()].map((s) => s.length), 7);
  const pct = (a: number, b: number) => `${b ? Math.round((100 * a) / b) : 0}%`.padStart(5);
  console.log(`${'section'.padEnd(width)}  done / total`);
  for (const [section, s] of result.sections) {
    console.log(`${section.padEnd(width)}  ${String(s.done).padStart(4)} / ${String(s.total).padEnd(5)} ${pct(s.done, s.total)}`);
  }
  console.log(`${'all'.padEnd(width)}  ${String(result.done).padStart(4)} / ${String(result.total).padEnd(5)} ${pct(result.done, result.total)}`);
  console.log(`\nextensions beyond the spec: ${result.extensions.length}`);
  if (!process.argv.includes('--no-missing') && result.missing.length) {
    console.log(`\nmissing (${result.missing.length}):`);
    for (const r of result.missing) console.log(`  ${r.method.padEnd(6)} ${r.path}`);
  }
  console.log(`\nimplemented ${result.done} of ${result.total} spec routes`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
