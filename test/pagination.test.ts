import path from 'node:path';
import { sql } from 'kysely';
import t from 'tap';
import { openDatabase } from '../server/src/platform/db/database.js';
import { ApiError } from '../server/src/platform/http/errors.js';
import { afterCursor, decodeCursor, encodeCursor, pageQuery, toPage } from '../server/src/platform/http/pagination.js';
import { tempDataDir } from './helpers/harness.js';

t.test('cursors round-trip and reject forgeries', async (t) => {
  const c = encodeCursor({ key: '2026-01-01T00:00:00.000Z', id: 'abc' });
  t.same(decodeCursor(c), { key: '2026-01-01T00:00:00.000Z', id: 'abc' });
  for (const bad of ['%%%', Buffer.from('{"a":1}').toString('base64url'), Buffer.from('[1]').toString('base64url')]) {
    t.throws(() => decodeCursor(bad), ApiError, bad);
  }
});

t.test('limit defaults to 50 and is bounded to 1..500', async (t) => {
  t.equal(pageQuery.parse({}).limit, 50);
  t.equal(pageQuery.parse({ limit: '500' }).limit, 500);
  t.notOk(pageQuery.safeParse({ limit: '501' }).success);
  t.notOk(pageQuery.safeParse({ limit: '0' }).success);
});

t.test('keyset pages walk a real table without gaps or repeats, ties broken by id', async (t) => {
  const { db, close } = openDatabase(path.join(tempDataDir(t), 'p.db'));
  t.teardown(close);
  await sql`create table things (id text primary key, made text not null)`.execute(db);
  const rows = Array.from({ length: 23 }, (_, i) => ({ id: `id-${String(i).padStart(2, '0')}`, made: `2026-01-0${(i % 3) + 1}` }));
  for (const r of rows) await sql`insert into things values (${r.id}, ${r.made})`.execute(db);

  for (const direction of ['asc', 'desc'] as const) {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const fetched = await (db as any)
        .selectFrom('things')
        .selectAll()
        .where(afterCursor('made', 'id', direction, cursor))
        .orderBy('made', direction)
        .orderBy('id', direction)
        .limit(5 + 1)
        .execute();
      const page = toPage(fetched as { id: string; made: string }[], 5, (r) => r.made);
      seen.push(...page.items.map((r) => r.id));
      cursor = page.nextCursor ?? undefined;
      pages++;
    } while (cursor);
    t.equal(pages, 5, direction);
    t.equal(seen.length, 23, `${direction}: every row once`);
    t.equal(new Set(seen).size, 23, `${direction}: no repeats`);
    const expected = [...rows].sort((a, b) => (a.made === b.made ? a.id.localeCompare(b.id) : a.made.localeCompare(b.made))).map((r) => r.id);
    t.same(seen, direction === 'asc' ? expected : expected.reverse(), `${direction}: in order`);
  }
});
