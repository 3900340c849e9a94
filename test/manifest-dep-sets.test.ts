import path from 'node:path';
import t from 'tap';
import { migrate, openDatabase } from '../server/src/platform/db/database.js';
import { MIGRATIONS } from '../server/src/platform/db/migrations/index.js';
import { depSetOf, recordManifestDeps, screensDependingOn, deleteManifestDeps } from '../server/src/modules/content/manifest.repo.js';
import { groupCommitStats } from '../server/src/modules/screens/group-commit.js';
import { tempDataDir } from './helpers/harness.js';
import { testDatabaseTarget } from './helpers/postgres.js';

/**
 * Manifest dependencies as shared sets (migration 0490): the rows a database had per screen
 * move to sets, equal sets become one, a screen's own assignment is implied by its row, and a
 * set no screen names is deleted.
 */

const setsOf = (sqlite: ReturnType<typeof openDatabase>['sqlite']) =>
  sqlite.prepare('select screen_id, set_id from manifest_screen_deps order by screen_id').all() as { screen_id: string; set_id: string }[];
const refsOf = (sqlite: ReturnType<typeof openDatabase>['sqlite'], setId: string) =>
  (sqlite.prepare('select kind, ref_id from manifest_dep_sets where set_id = ? order by kind, ref_id').all(setId) as { kind: string; ref_id: string }[]).map(
    (r) => `${r.kind}:${r.ref_id}`,
  );

t.test('migration 0490 moves each screen’s rows to a set, one set for equal rows', async (t) => {
  const dir = tempDataDir(t);
  const database = openDatabase(path.join(dir, 'placard.db'));
  t.teardown(database.close);
  await migrate(
    database.db,
    MIGRATIONS.filter((m) => m.version < 490),
  );
  const insert = database.sqlite.prepare('insert into manifest_deps (screen_id, kind, ref_id) values (?, ?, ?)');
  for (const screen of ['a', 'b']) {
    insert.run(screen, 'assignment', screen);
    insert.run(screen, 'assignment', 'g1');
    insert.run(screen, 'playlist', 'p1');
    insert.run(screen, 'asset', 'x1');
  }
  insert.run('c', 'assignment', 'c');
  insert.run('c', 'schedule', 's1');
  await migrate(database.db);
  const sets = setsOf(database.sqlite);
  t.same(
    sets.map((r) => r.screen_id),
    ['a', 'b', 'c'],
  );
  t.equal(sets[0]!.set_id, sets[1]!.set_id, 'a and b share one set');
  t.not(sets[0]!.set_id, sets[2]!.set_id);
  t.same(refsOf(database.sqlite, sets[0]!.set_id), ['asset:x1', 'assignment:g1', 'playlist:p1'], 'the own slot is implied, not stored');
  t.same(refsOf(database.sqlite, sets[2]!.set_id), ['schedule:s1']);
  t.equal(
    sets[0]!.set_id,
    depSetOf('a', [
      { kind: 'playlist', id: 'p1' },
      { kind: 'asset', id: 'x1' },
      { kind: 'assignment', id: 'g1' },
      { kind: 'assignment', id: 'a' },
    ]).id,
    'the id the repository makes',
  );
  t.same((await screensDependingOn(database.db, [{ kind: 'asset', id: 'x1' }])).sort(), ['a', 'b']);
  t.same(await screensDependingOn(database.db, [{ kind: 'assignment', id: 'c' }]), ['c'], 'a screen’s own slot');
  t.same((await screensDependingOn(database.db, [{ kind: 'assignment', id: 'g1' }])).sort(), ['a', 'b'], 'a group’s slot');
  t.same(await screensDependingOn(database.db, [{ kind: 'asset', id: 'nope' }]), []);
  t.equal(
    (database.sqlite.prepare("select count(*) as n from sqlite_master where name = 'manifest_deps'").get() as { n: number }).n,
    0,
    'the old table is gone',
  );
});

t.test('recording: a changed set writes one row, a set no screen names is deleted', async (t) => {
  const dir = tempDataDir(t);
  const database = openDatabase(path.join(dir, 'placard.db'));
  t.teardown(database.close);
  await migrate(database.db);
  const one = depSetOf('a', [{ kind: 'playlist', id: 'p1' }]);
  const two = depSetOf('a', [
    { kind: 'playlist', id: 'p1' },
    { kind: 'asset', id: 'x2' },
  ]);
  t.equal(
    depSetOf('b', [
      { kind: 'playlist', id: 'p1' },
      { kind: 'assignment', id: 'b' },
    ]).id,
    one.id,
    'another screen’s build of the same refs: the same set',
  );
  await recordManifestDeps(database.db, 'a', one);
  await recordManifestDeps(database.db, 'b', one);
  t.same(refsOf(database.sqlite, one.id), ['playlist:p1'], 'stored once');
  await recordManifestDeps(database.db, 'a', two);
  t.same(
    setsOf(database.sqlite).map((r) => r.set_id),
    [two.id, one.id],
  );
  t.same(refsOf(database.sqlite, one.id), ['playlist:p1'], 'b still names the old set: kept');
  await recordManifestDeps(database.db, 'b', two);
  t.same(refsOf(database.sqlite, one.id), [], 'no screen names it: deleted');
  t.same((await screensDependingOn(database.db, [{ kind: 'asset', id: 'x2' }])).sort(), ['a', 'b']);
  await deleteManifestDeps(database.db, 'a');
  t.same(refsOf(database.sqlite, two.id), ['asset:x2', 'playlist:p1'], 'b names it still');
  await deleteManifestDeps(database.db, 'b');
  t.same(refsOf(database.sqlite, two.id), [], 'the last screen gone: deleted');
  t.same(setsOf(database.sqlite), []);
});

t.test('records arriving together are written as one batch, as if one after the other (both databases)', async (t) => {
  const target = await testDatabaseTarget(t, tempDataDir(t));
  const database = openDatabase(target);
  t.teardown(database.close);
  const db = database.db;
  await migrate(db);
  const set = (...ids: string[]) =>
    depSetOf(
      '-',
      ids.map((id) => ({ kind: 'playlist' as const, id })),
    );
  const [x, y, z] = [set('p1'), set('p2'), set('p1', 'p3')];
  const screens = Array.from({ length: 120 }, (_, i) => `s${String(i).padStart(3, '0')}`);
  // First: everyone on x, except the last ten on y.
  await Promise.all(screens.map((s, i) => recordManifestDeps(db, s, i >= 110 ? y : x)));
  const before = groupCommitStats(db);
  // Then together: the first hundred move to z, the last ten from y to x, and s000 is recorded twice (z, then y).
  await Promise.all([
    ...screens.slice(0, 100).map((s) => recordManifestDeps(db, s, z)),
    ...screens.slice(110).map((s) => recordManifestDeps(db, s, x)),
    recordManifestDeps(db, 's000', y),
  ]);
  const after = groupCommitStats(db);
  t.ok(after.jobs - before.jobs <= 2, `111 records in ${after.jobs - before.jobs} write(s), not one each`);
  const rows = await db.selectFrom('manifest_screen_deps').select(['screen_id', 'set_id']).orderBy('screen_id').execute();
  const named = new Map(rows.map((r) => [r.screen_id, r.set_id]));
  t.equal(named.size, 120);
  t.equal(named.get('s000'), y.id, 'the later record of a screen wins');
  t.ok(
    screens.slice(1, 100).every((s) => named.get(s) === z.id),
    'the hundred moved to z',
  );
  t.ok(
    screens.slice(100).every((s) => named.get(s) === x.id),
    'the rest name x',
  );
  const refs = async (id: string) =>
    (await db.selectFrom('manifest_dep_sets').select(['kind', 'ref_id']).where('set_id', '=', id).orderBy('ref_id').execute()).map((r) => r.ref_id);
  t.same(await refs(x.id), ['p1']);
  t.same(await refs(y.id), ['p2'], 'y: still named (s000), kept');
  t.same(await refs(z.id), ['p1', 'p3'], 'z: stored once');
  const stored = await db.selectFrom('manifest_dep_sets').select('set_id').distinct().execute();
  t.same(stored.map((r) => r.set_id).sort(), [x.id, y.id, z.id].sort(), 'no set no screen names, none missing');
  t.same((await screensDependingOn(db, [{ kind: 'playlist', id: 'p3' }])).length, 99);

  // Everyone leaves y and x: both deleted in the same batch.
  await Promise.all(screens.map((s) => recordManifestDeps(db, s, z)));
  t.same(
    (await db.selectFrom('manifest_dep_sets').select('set_id').distinct().execute()).map((r) => r.set_id),
    [z.id],
  );
});
