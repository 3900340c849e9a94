import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { MODULES } from '../server/src/modules/index.js';
import { ROUTES } from '../server/src/routes.js';
import { areaDependencies, contractViolations, importCircles, importGraph, type ImportGraph } from './helpers/import-graph.js';

// The module contract (docs/architecture.md, "Modules"): checked on the tree as it is.
const ROOT = path.resolve(import.meta.dirname, '../server/src');
const graph = importGraph(ROOT);

t.test('the checker finds circles and contract breaks in a made-up tree', async (t) => {
  const bad: ImportGraph = new Map([
    ['modules/a/index.ts', ['modules/a/x.ts']],
    ['modules/a/x.ts', ['modules/b/y.ts', 'app.ts']],
    ['modules/b/index.ts', ['modules/b/y.ts']],
    ['modules/b/y.ts', ['modules/a/index.ts']],
    ['platform/p.ts', ['modules/b/index.ts']],
    ['app.ts', []],
  ]);
  t.same(importCircles(bad), [['modules/a/index.ts', 'modules/a/x.ts', 'modules/b/y.ts']], 'the circle a -> b -> a is found');
  t.same(contractViolations(bad), [
    'modules/a/x.ts imports app.ts: a module never imports the composition root',
    "modules/a/x.ts imports modules/b/y.ts: another module's internals (import modules/b/index.ts)",
    'platform/p.ts imports modules/b/index.ts: platform/ depends on no module and nothing above it',
  ]);
  t.same(importCircles(new Map([['a.ts', ['a.ts']]])), [['a.ts']], 'a file importing itself is a circle');
});

t.test('the server has no import circle (type-only imports count too)', async (t) => {
  t.ok(graph.size > 100, `the graph holds the tree (${graph.size} files)`);
  t.same(importCircles(graph), []);
});

t.test('modules use each other through their index.ts only; platform/ depends on no module', async (t) => {
  t.same(contractViolations(graph), []);
});

t.test('every module folder is one module of MODULES, installed after the modules it uses', async (t) => {
  const dirs = readdirSync(path.join(ROOT, 'modules'))
    .filter((d) => statSync(path.join(ROOT, 'modules', d)).isDirectory())
    .sort();
  t.same(MODULES.map((m) => m.name).sort(), dirs, 'one module per folder under modules/');
  for (const d of dirs) t.ok(graph.has(`modules/${d}/index.ts`), `modules/${d}/index.ts exists`);
  const order = new Map(MODULES.map((m, i) => [m.name, i]));
  for (const [area, uses] of areaDependencies(graph)) {
    for (const used of uses) t.ok(order.get(used)! < order.get(area)!, `${area} comes after ${used}, which it uses`);
  }
  t.equal(
    ROUTES.length,
    MODULES.reduce((n, m) => n + m.routes.length, 0),
    "the routes are the modules' routes",
  );
  t.equal(new Set(ROUTES).size, ROUTES.length, 'no route is listed by two modules');
});
