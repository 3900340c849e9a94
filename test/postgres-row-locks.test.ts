/**
 * Row-locked transactions (issue 25: platform/db/postgres.ts, database.ts rowLockedTransaction):
 * on PostgreSQL the heartbeats' and liveness pings' transactions skip the writer lock every
 * other transaction takes, lock their screen's row instead, and still wait for a restore
 * (the database lock). The driver part needs PLACARD_TEST_DATABASE_URL; the heartbeats part
 * runs on both databases: concurrent heartbeats of one screen write as if one after the other.
 */
import t from 'tap';
import pg from 'pg';
import { openDatabase, rowLockedTransaction } from '../server/src/platform/db/database.js';
import { DATABASE_LOCK, WRITER_LOCK } from '../server/src/platform/db/postgres.js';
import { signIn } from './helpers/auth.js';
import { startApp } from './helpers/harness.js';
import { freshPostgresDatabase, TEST_DATABASE_URL } from './helpers/postgres.js';
import { pairScreen } from './helpers/screens.js';

const skip = TEST_DATABASE_URL ? false : 'needs PostgreSQL: set PLACARD_TEST_DATABASE_URL (npm run test:postgres)';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A promise and its resolver: a transaction's callback awaits it to stay open. */
function gate() {
  let open!: () => void;
  const promise = new Promise<void>((r) => {
    open = r;
  });
  return { promise, open };
}

t.test('PostgreSQL: a row-locked transaction skips the writer lock and waits for the database lock', { skip }, async (t) => {
  const { url } = await freshPostgresDatabase(t);
  const opened = openDatabase(url, { poolSize: 4 });
  t.teardown(() => opened.close());
  const db = opened.db;
  const observer = new pg.Client({ connectionString: url });
  await observer.connect();
  t.teardown(() => observer.end());
  /** Sessions waiting for an advisory lock with this key. */
  const waitingFor = async (key: number) =>
    Number(
      (await observer.query<{ n: string }>(`select count(*) as n from pg_locks where locktype = 'advisory' and not granted and objid = $1`, [key])).rows[0]!.n,
    );
  const until = async (what: () => Promise<boolean>, label: string) => {
    const deadline = Date.now() + 5_000;
    while (!(await what())) {
      if (Date.now() > deadline) throw new Error(`timed out: ${label}`);
      await sleep(20);
    }
  };

  // An ordinary transaction holds the writer lock.
  const held = gate();
  let inside!: () => void;
  const entered = new Promise<void>((r) => {
    inside = r;
  });
  const first = db.transaction().execute(async (trx) => {
    await trx.selectFrom('meta').select('key').execute();
    inside();
    await held.promise;
  });
  await entered;

  // A second ordinary transaction waits for it: PostgreSQL shows it waiting for the writer lock.
  const order: string[] = [];
  const second = db
    .transaction()
    .execute(async (trx) => {
      await trx.selectFrom('meta').select('key').execute();
    })
    .then(() => order.push('ordinary'));
  await until(async () => (await waitingFor(WRITER_LOCK)) === 1, 'the second ordinary transaction waits for the writer lock');

  // A row-locked one runs and commits meanwhile (it would wait for `held` otherwise).
  const wrote = await rowLockedTransaction(db).execute(async (trx) => {
    await trx.insertInto('meta').values({ key: 'row-locked-probe', value: 'yes' }).execute();
    return 'committed';
  });
  order.push('row-locked');
  t.equal(wrote, 'committed', 'the row-locked transaction committed while the writer lock was held');
  t.same(order, ['row-locked'], 'the ordinary transaction still waits');
  held.open();
  await Promise.all([first, second]);
  t.same(order, ['row-locked', 'ordinary']);

  // A restore holds the database lock exclusively: row-locked transactions wait for it too.
  const restore = new pg.Client({ connectionString: url });
  await restore.connect();
  t.teardown(() => restore.end());
  await restore.query(`select pg_advisory_lock(${DATABASE_LOCK})`);
  let done = false;
  const blocked = rowLockedTransaction(db)
    .execute((trx) => trx.selectFrom('meta').select('key').execute())
    .then(() => {
      done = true;
    });
  await until(async () => (await waitingFor(DATABASE_LOCK)) === 1, 'the row-locked transaction waits for the database lock');
  t.notOk(done, 'nothing runs while the database lock is held');
  await restore.query(`select pg_advisory_unlock(${DATABASE_LOCK})`);
  await blocked;
  t.ok(done, 'it runs once the lock is released');

  // Any other isolation level or access mode is refused: the locks above are what transactions get.
  await t.rejects(
    db
      .transaction()
      .setIsolationLevel('serializable')
      .execute(async () => undefined),
    /not supported/,
  );
  await t.rejects(
    db
      .transaction()
      .setAccessMode('read only')
      .execute(async () => undefined),
    /not supported/,
  );
});

t.test('concurrent heartbeats of one screen write as if one after the other', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const screen = await pairScreen(app, owner);
  const db = app.deps.db;
  await db.updateTable('screens').set({ known_status: 'offline' }).where('id', '=', screen.screenId).execute();

  // The same 12 buckets in every heartbeat: stored once, counted once in the roll-ups.
  const start = Date.UTC(2026, 0, 1, 12, 0, 0);
  const buckets = Array.from({ length: 12 }, (_, i) => ({
    startedAt: new Date(start + i * 10_000).toISOString(),
    averageLevel: 40 + i,
    peakLevel: 60,
    monitoredMs: 10_000,
    warningMs: 0,
    loudMs: 0,
    triggerCount: 1,
  }));
  const n = 16;
  const replies = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      app.json('/api/v1/player/heartbeat', {
        method: 'POST',
        headers: screen.headers,
        json: { playerVersion: `2.0.${i}`, noiseMeter: { status: 'active', pendingHistory: buckets } },
      }),
    ),
  );
  t.same(
    replies.map((r) => r.status),
    Array(n).fill(200),
    'every heartbeat answered 200',
  );
  t.ok(
    replies.every((r) => r.body.data.noiseHistory.accepted === 12),
    'each heartbeat reports its buckets stored',
  );

  const history = await db.selectFrom('screen_history').select(['kind', 'detail']).where('screen_id', '=', screen.screenId).execute();
  t.equal(history.filter((h) => h.kind === 'heartbeat').length, n, 'one heartbeat line each');
  const statusLines = history.filter((h) => h.kind === 'status' && JSON.parse(h.detail).to === 'online' && JSON.parse(h.detail).from === 'offline');
  t.equal(statusLines.length, 1, 'offline to online recorded once: each heartbeat read what the one before wrote');
  const versions = history.filter((h) => h.kind === 'version').map((h) => JSON.parse(h.detail));
  t.equal(versions.length, n, 'each version change recorded against the version the heartbeat before it wrote');
  const froms = new Set(versions.map((v) => v.from));
  t.equal(froms.size, n, 'no two heartbeats read the same previous version');

  const row = await db.selectFrom('screens').select(['num', 'known_status']).where('id', '=', screen.screenId).executeTakeFirstOrThrow();
  t.equal(row.known_status, 'online');
  const stored = await db
    .selectFrom('noise_buckets')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('screen_num', '=', row.num!)
    .executeTakeFirstOrThrow();
  t.equal(Number(stored.n), 12, 'the buckets stored once');
  const minutes = await db.selectFrom('noise_minutes').select(['bucket_count', 'trigger_count']).where('screen_num', '=', row.num!).execute();
  t.equal(
    minutes.reduce((s, m) => s + m.bucket_count, 0),
    12,
    'the roll-ups count each bucket once',
  );
  t.equal(
    minutes.reduce((s, m) => s + m.trigger_count, 0),
    12,
  );
});
