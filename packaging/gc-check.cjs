// The failure that made the release abort on Node 24 with better-sqlite3 12, provoked on
// purpose: many prepared statements become garbage, then the process idles, so V8's own GC
// tasks (run by the platform with no JavaScript context entered) finalise them. On Node
// >= 24.19 with better-sqlite3 <= 12 that aborts with
//   Assertion failed: (env) != nullptr ... RemoveEnvironmentCleanupHook ... Statement::~Statement()
// within a second; on a good combination it prints "gc-check: ok". smoke.sh runs it with the
// bundled Node against the packaged addon.
// Usage: <node> gc-check.cjs <package dir> [idle ms]
'use strict';
const path = require('node:path');
const { createRequire } = require('node:module');
const [dir, idleArg] = process.argv.slice(2);
const Database = createRequire(path.join(path.resolve(dir), 'package.json'))('better-sqlite3');
const idleMs = Number(idleArg ?? 3000);
const db = new Database(':memory:');
db.exec('create table t (x integer)');
for (let i = 0; i < 50000; i++) db.prepare(`select ${i} as v`).get();
for (let i = 0; i < 2000; i++) db.prepare('insert into t values (?)').run(i);
const started = Date.now();
const timer = setInterval(() => {
  if (Date.now() - started < idleMs) return;
  clearInterval(timer);
  db.close();
  console.log(`gc-check: ok (52000 statements left to the GC, ${idleMs} ms idle, node ${process.version} ${process.arch})`);
}, 250);
