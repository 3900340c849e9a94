/**
 * The server (server/src/main.ts's main()) with every better-sqlite3 statement timed by
 * its SQL text, for finding which queries a fleet run spends its time in: a CPU profile
 * shows that time under kysely's driver with no caller (the await chain is lost). At exit
 * the totals are written as JSON to $FLEET_SQL_TRACE, most time first.
 *   npm run bench:fleet -- --players 1000 --entry scripts/bench/fleet/sql-traced-server.ts
 *   (with FLEET_SQL_TRACE=/tmp/sql.json in the environment)
 * Bench-only: nothing of the server changes; the timing wraps the driver's methods.
 */
import { writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { main } from '../../../server/src/main.js';

const out = process.env.FLEET_SQL_TRACE;
const totals = new Map<string, { calls: number; ms: number; rows: number }>();
const probe = new Database(':memory:');
const statementProto = Object.getPrototypeOf(probe.prepare('select 1')) as Record<string, (...args: unknown[]) => unknown> & { source?: string };
probe.close();
for (const method of ['run', 'get', 'all', 'iterate'] as const) {
  const original = statementProto[method]!;
  statementProto[method] = function (this: { source: string }, ...args: unknown[]) {
    const t0 = process.hrtime.bigint();
    const result = original.apply(this, args);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const key = this.source.replace(/\s+/g, ' ').replace(/\(\?(, \?)+\)(, \(\?(, \?)+\))*/g, '(?...)');
    const entry = totals.get(key) ?? { calls: 0, ms: 0, rows: 0 };
    entry.calls++;
    entry.ms += ms;
    if (Array.isArray(result)) entry.rows += result.length;
    totals.set(key, entry);
    return result;
  };
}
process.on('exit', () => {
  if (!out) return;
  const sorted = [...totals]
    .sort((a, b) => b[1].ms - a[1].ms)
    .map(([sql, t]) => ({ ms: Math.round(t.ms), calls: t.calls, rows: t.rows, sql: sql.slice(0, 600) }));
  writeFileSync(out, JSON.stringify(sorted, null, 1));
});
await main();
