import { readdirSync, readFileSync, statSync } from 'node:fs';
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

/**
 * Per-app state lives in deps.scope (platform/app-scope.ts). What may stay at module level,
 * each with its reason: memos of immutable inputs, state keyed by the app's own database or
 * data directory (so per app already), and facts about the machine.
 */
const MODULE_STATE_ALLOWED: Record<string, string> = {
  'modules/screens/group-commit.ts committers': 'keyed by the database: one committer per connection',
  'modules/content/manifest.repo.ts recorders': 'keyed by the database: one batch of dependency records per connection',
  'modules/system/settings.ts cache': 'keyed by the database',
  'modules/system/settings.ts generation': 'invalidates every database’s cached settings after a write through a transaction',
  'modules/system/maintenance.ts stores': 'keyed by the data directory the runs guard',
  'modules/system/status.ts diskUsageCache': 'keyed by directory: a walk of the disk',
  'modules/system/openapi.routes.ts documents': 'keyed by the routes array: a memo',
  'modules/system/time-zone.ts detected': 'a fact about the machine',
  'modules/accounts/passwords.ts decoy': 'a constant hash for timing',
  'platform/http/responses.ts cache': 'keyed by route: a memo',
  'platform/openapi/document.ts envelopes': 'a memo of schemas',
  'platform/db/database.ts opened': 'keyed by the database',
  'platform/db/database.ts durabilityOf': 'keyed by the database: its fsync bookkeeping',
  'platform/db/database.ts readersOf': 'keyed by the database: its synchronous read path (readNow)',
  'platform/db/database.ts heldRunnersOf': 'keyed by the database: its statements at once for a transaction holding the connection',
  'platform/db/database.ts held': 'keyed by a transaction (holdConnection), while its callback runs',
  'platform/db/database.ts postgresUrls': 'keyed by the opened database: the URL with its password, off the handle (pg_dump/pg_restore)',
  'platform/db/json.ts jsonValid': 'a private in-memory SQLite statement: json_valid, no state',
  'modules/schedules/recurrence.ts compiledRules': 'a memo of RRULE text: its parsed options (bounded)',
  'modules/schedules/recurrence.ts seriesEnds': 'a memo of (RRULE text, start): where a COUNT series ends (bounded)',
  'platform/time/zone-clock.ts zones': 'a memo of zone names: luxon zones',
  'platform/time/zone-clock.ts months': 'a memo of (zone, month): the offsets tzdata gives (bounded)',
  'modules/screens/noise-rollups.repo.ts upsertTexts': 'a memo of SQL text by table and row count (bounded by MAX_BUCKETS)',
  'modules/screens/heartbeat.repo.ts bucketInsertTexts': 'a memo of SQL text by row count (at most 120 buckets a heartbeat)',
  'modules/screens/policies.ts parsedPolicies': 'a memo of policy JSON text: its parsed document (bounded)',
  'modules/content/plan.ts dayparted': 'a memo of (day-parts, validity, zone, window): the windows they allow (bounded)',
  'modules/content/resolve.ts expansions': 'a memo of (schedule id, timing, rule, zone, window): its occurrences (bounded)',
  'modules/content/playlist-parts.ts stores': 'keyed by the database: the playlist parts kept between manifest builds (bounded)',
  'platform/db/prepared.ts numbered': 'a memo of the code’s SQL texts with PostgreSQL’s numbered placeholders (bounded by the texts)',
  'platform/db/postgres.ts checked': 'weak: the pooled PostgreSQL connections whose statements are checked for NUL characters',
};

t.test('no module-level state outside the app scope, beyond the listed exceptions', async (t) => {
  const found: string[] = [];
  const declaration = /^(?:export )?(?:let ([A-Za-z_$][\w$]*)|const ([A-Za-z_$][\w$]*)(?:: [^=]+)? = new (?:Map|Set|WeakMap|WeakSet)(?:<.*>)?\(\))/;
  for (const file of graph.keys()) {
    const text = readFileSync(path.join(ROOT, file), 'utf8');
    for (const line of text.split('\n')) {
      const m = declaration.exec(line);
      if (m) found.push(`${file} ${m[1] ?? m[2]}`);
    }
  }
  t.ok(found.length >= Object.keys(MODULE_STATE_ALLOWED).length, 'the scan finds the listed ones');
  t.same(
    found.filter((f) => !(f in MODULE_STATE_ALLOWED)),
    [],
    'registries, caches and counters of an app are in deps.scope (platform/app-scope.ts)',
  );
  t.same(
    Object.keys(MODULE_STATE_ALLOWED).filter((f) => !found.includes(f)),
    [],
    'no stale exception',
  );
});

/** A line that builds a kysely query: a query builder's start, or the `sql` template tag (with or without a type argument). */
const QUERY = /\.(selectFrom|insertInto|updateTable|deleteFrom|replaceInto)\(|\bsql\s*[`<]/;

t.test('the query pattern sees the ways a module builds a query, and not their names in prose', async (t) => {
  for (const line of [
    "db.selectFrom('screens')",
    "trx.insertInto('manifest_deps')",
    '.updateTable(`assets`)',
    "db.deleteFrom('x')",
    'db.replaceInto(t)',
    'sql`select 1`',
    'sql<{ id: string }>`select id from screens`',
    'await sql<{',
  ])
    t.ok(QUERY.test(line), line);
  for (const line of ['// selectFrom in a comment', 'const mysql = 1', 'an SQL statement', 'import { sql } from "kysely"', 'the sql tag'])
    t.notOk(QUERY.test(line), line);
});

t.test('route files hold route definitions: queries live in repositories, and only index.ts imports them', async (t) => {
  const query = new RegExp(`${QUERY.source}|\\.transaction\\(\\)`);
  const queries: string[] = [];
  const importers: string[] = [];
  for (const [file, imports] of graph) {
    if (file.endsWith('.routes.ts')) {
      readFileSync(path.join(ROOT, file), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (query.test(line)) queries.push(`${file}:${i + 1}`);
        });
    }
    for (const target of imports) {
      if (!target.endsWith('.routes.ts')) continue;
      const own = `${path.dirname(target)}/index.ts`;
      if (file !== own) importers.push(`${file} imports ${target}`);
    }
  }
  t.same(queries, [], 'no kysely query or transaction in a *.routes.ts file');
  t.same(importers, [], "a module's routes files are imported by its index.ts only");
});

t.test("a module file that builds a kysely query is a repository (*.repo.ts): the module's queries in one place", async (t) => {
  const builders = [...graph.keys()]
    .filter((f) => f.startsWith('modules/') && !f.endsWith('.repo.ts'))
    .filter((f) =>
      readFileSync(path.join(ROOT, f), 'utf8')
        .split('\n')
        .some((line) => QUERY.test(line)),
    )
    .sort();
  t.same(builders, [], "move the queries into the module's <name>.repo.ts (plain functions taking db or a transaction)");
});

t.test('no server file over 500 lines', async (t) => {
  const long = [...graph.keys()]
    .filter((f) => !f.startsWith('platform/db/migrations/'))
    .map((f) => [f, readFileSync(path.join(ROOT, f), 'utf8').trimEnd().split('\n').length] as const)
    .filter(([, n]) => n > 500);
  t.same(long, [], 'split a file that grows past 500 lines by what it does');
});
