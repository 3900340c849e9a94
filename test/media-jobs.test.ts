import path from 'node:path';
import t, { type Test } from 'tap';
import { migrate, openDatabase } from '../server/src/platform/db/database.js';
import { JobQueue, PermanentJobError } from '../server/src/platform/jobs/queue.js';
import { createLogger } from '../server/src/platform/log.js';
import { MediaService, mediaServiceOf, PROCESS_JOB, registerMediaJobs } from '../server/src/modules/media/service.js';
import { startApp, tempDataDir } from './helpers/harness.js';

const logger = createLogger('silent');

async function database(t: Test, dir = tempDataDir(t)) {
  const opened = openDatabase(path.join(dir, 'placard.db'));
  await migrate(opened.db);
  t.teardown(() => opened.close());
  return { ...opened, dir };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('bounded concurrency and progress', async (t) => {
  const { db } = await database(t);
  const q = new JobQueue(db, logger, { concurrency: 2 });
  let running = 0;
  let peak = 0;
  q.register('work', {
    async run(_p, ctx) {
      running++;
      peak = Math.max(peak, running);
      ctx.progress(0.5);
      await sleep(60);
      running--;
    },
  });
  await q.start();
  for (let i = 0; i < 6; i++) await q.enqueue('work', { i });
  await q.idle();
  t.equal(peak, 2, 'never more than the concurrency');
  const rows = await db.selectFrom('jobs').selectAll().execute();
  t.same(
    rows.map((r) => r.state),
    Array(6).fill('done'),
  );
  t.ok(rows.every((r) => r.progress === 1 && r.attempts === 1));
  await q.stop();
});

t.test('retries with backoff, then fails for good; permanent errors do not retry', async (t) => {
  const { db } = await database(t);
  const q = new JobQueue(db, logger, { concurrency: 1, backoffBaseMs: 40 });
  const attempts: number[] = [];
  const failed: string[] = [];
  q.register('flaky', {
    async run(_p, ctx) {
      attempts.push(Date.now());
      if (ctx.attempt < 3) throw new Error(`try ${ctx.attempt}`);
    },
  });
  q.register('doomed', {
    async run() {
      throw new Error('always');
    },
    async onFailed(_p, error) {
      failed.push(error);
    },
  });
  q.register('corrupt', {
    async run() {
      throw new PermanentJobError('corrupt file');
    },
    async onFailed(_p, error) {
      failed.push(error);
    },
  });
  await q.start();
  const flaky = await q.enqueue('flaky', {}, { maxAttempts: 3 });
  const doomed = await q.enqueue('doomed', {}, { maxAttempts: 2 });
  const corrupt = await q.enqueue('corrupt', {}, { maxAttempts: 5 });
  for (let i = 0; i < 100 && failed.length < 2; i++) await sleep(20);
  for (let i = 0; i < 100; i++) {
    const row = await db.selectFrom('jobs').select('state').where('id', '=', flaky).executeTakeFirstOrThrow();
    if (row.state === 'done') break;
    await sleep(20);
  }
  const byId = async (id: string) => db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  t.equal((await byId(flaky)).state, 'done');
  t.equal((await byId(flaky)).attempts, 3);
  t.ok(attempts[1]! - attempts[0]! >= 35, 'first retry after the base backoff');
  t.ok(attempts[2]! - attempts[1]! >= 75, 'second retry after twice that');
  t.same([(await byId(doomed)).state, (await byId(doomed)).attempts, (await byId(doomed)).last_error], ['failed', 2, 'always']);
  t.same([(await byId(corrupt)).state, (await byId(corrupt)).attempts], ['failed', 1], 'no retry of a permanent failure');
  t.same(failed.sort(), ['always', 'corrupt file']);
  await q.stop();
});

t.test('survives a restart: interrupted and queued jobs run in the next process', async (t) => {
  const dir = tempDataDir(t);
  const first = openDatabase(path.join(dir, 'placard.db'));
  await migrate(first.db);
  const q1 = new JobQueue(first.db, logger, { concurrency: 1 });
  let started = 0;
  q1.register('long', {
    run: (_p, ctx) =>
      new Promise<void>((resolve, reject) => {
        started++;
        const timer = setTimeout(resolve, 60_000);
        ctx.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(new Error('aborted'));
        });
      }),
  });
  await q1.start();
  const a = await q1.enqueue('long', { n: 1 });
  const b = await q1.enqueue('long', { n: 2 });
  for (let i = 0; i < 50 && started === 0; i++) await sleep(10);
  t.equal(started, 1);
  await q1.stop();
  const states = await first.db.selectFrom('jobs').select(['id', 'state', 'attempts']).orderBy('id').execute();
  t.same(
    states.map((s) => [s.state, s.attempts]),
    [
      ['queued', 0],
      ['queued', 0],
    ],
    'the interrupted job is queued again without spending an attempt',
  );
  // Simulate a crash too: a row left `running`.
  await first.db.updateTable('jobs').set({ state: 'running' }).where('id', '=', b).execute();
  await first.close();

  const second = openDatabase(path.join(dir, 'placard.db'));
  t.teardown(() => second.close());
  const q2 = new JobQueue(second.db, logger, { concurrency: 2 });
  const ran: number[] = [];
  q2.register('long', { run: async (p: { n: number }) => void ran.push(p.n) });
  await q2.start();
  await q2.idle();
  t.same(ran.sort(), [1, 2]);
  const done = await second.db.selectFrom('jobs').select('state').where('id', 'in', [a, b]).execute();
  t.same(
    done.map((d) => d.state),
    ['done', 'done'],
  );
  await q2.stop();
});

t.test('a job that brings the server down counts it as an attempt; at the limit it fails and is not run again', async (t) => {
  const { db } = await database(t);
  const ran: number[] = [];
  const failures: string[] = [];
  // Each "process" runs the job until it hangs; the process then dies without a clean stop
  // (the row stays `running`, as after a crash or the OOM killer).
  const generation = async () => {
    const q = new JobQueue(db, logger, { concurrency: 1 });
    let entered!: () => void;
    const started = new Promise<void>((r) => (entered = r));
    q.register('boom', {
      run: (_p, ctx) => {
        ran.push(ctx.attempt);
        entered();
        return new Promise<void>(() => {}); // never settles: the process "dies" here
      },
      async onFailed(_p, error) {
        failures.push(error);
      },
    });
    await q.start();
    return { q, started };
  };
  const id = await (async () => {
    const q = new JobQueue(db, logger, { concurrency: 1 });
    return q.enqueue('boom', { n: 1 }, { maxAttempts: 3 });
  })();
  const row = () => db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  for (let i = 1; i <= 3; i++) {
    const { started } = await generation();
    await started;
    t.same([(await row()).state, (await row()).attempts], ['running', i], `run ${i} is under way when the server dies`);
  }
  t.same(ran, [1, 2, 3], 'each restart ran it again, counting the crash as an attempt');
  t.match((await row()).last_error, /server stopped while this job ran \(2\)/, 'the crashes so far are noted');

  // The fourth start finds it running on its last attempt: failed, not run again.
  const { q } = await generation();
  await q.idle();
  const failed = await row();
  t.equal(failed.state, 'failed');
  t.equal(failed.attempts, 3);
  t.match(failed.last_error, /^processing stopped the server 3 times/);
  t.same(failures, [failed.last_error], 'the handler heard why (e.g. to fail its asset)');
  t.same(ran, [1, 2, 3], 'and it did not run a fourth time');
});

t.test('a media job that crashed the server on its last attempt fails its asset', async (t) => {
  const app = await startApp(t);
  const { db } = app.deps;
  // The app's own queue starts in the background (after its work directories are ready) and
  // could otherwise be the one to find the row below and fail it, still busy when we look:
  // stopped, it never takes part (start() after stop() does nothing).
  await mediaServiceOf(app.deps)!.jobs.stop();
  const now = new Date().toISOString();
  const assetId = '0190f5a2-7b3c-7def-8abc-0123456789ab';
  await db
    .insertInto('assets')
    .values({
      id: assetId,
      kind: 'image',
      state: 'processing',
      state_before_archive: null,
      name: 'crasher.png',
      sha256: null,
      size_bytes: null,
      content_type: 'image/png',
      original_filename: null,
      width: null,
      height: null,
      duration_ms: null,
      page_count: null,
      folder_id: null,
      failure_reason: null,
      progress: 0.5,
      metadata: '{}',
      website: null,
      created_by: null,
      created_at: now,
      updated_at: now,
      archived_at: null,
    })
    .execute();
  const job = {
    ...JobQueue.row(PROCESS_JOB, { assetId }),
    state: 'running' as const,
    attempts: 3,
    max_attempts: 3,
    last_error: 'the server stopped while this job ran (2)',
  };
  await db.insertInto('jobs').values(job).execute();
  // What the next process does at start.
  const q = new JobQueue(db, logger, { concurrency: 1 });
  registerMediaJobs(q, new MediaService(app.deps, q));
  await q.start();
  await q.idle();
  const asset = await db.selectFrom('assets').selectAll().where('id', '=', assetId).executeTakeFirstOrThrow();
  t.equal(asset.state, 'failed');
  t.match(asset.failure_reason, /processing stopped the server 3 times/);
  t.equal(asset.progress, null);
  await q.stop();
});

t.test('pause interrupts running jobs and claims nothing; resume requeues what the live data holds as running', async (t) => {
  const { db } = await database(t);
  const q = new JobQueue(db, logger, { concurrency: 2 });
  const started: number[] = [];
  const aborted: number[] = [];
  q.register('long', {
    run: (p: { i: number }, ctx) =>
      new Promise<void>((resolve, reject) => {
        started.push(p.i);
        const timer = setTimeout(resolve, 200);
        ctx.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          aborted.push(p.i);
          reject(new Error('aborted'));
        });
      }),
  });
  await q.start();
  for (let i = 0; i < 3; i++) await q.enqueue('long', { i });
  while (started.length < 2) await sleep(5);
  await q.pause();
  t.same(aborted.sort(), [0, 1], 'the running jobs were interrupted');
  let rows = await db.selectFrom('jobs').selectAll().orderBy('created_at').execute();
  t.same(
    rows.map((r) => [r.state, r.attempts]),
    [
      ['queued', 0],
      ['queued', 0],
      ['queued', 0],
    ],
    'back to queued, their attempt given back',
  );
  await q.enqueue('long', { i: 3 });
  await sleep(100);
  t.equal(started.length, 2, 'nothing is claimed while paused, not even new work');

  // The restored database says a job was running when its backup was taken.
  await db.updateTable('jobs').set({ state: 'running', attempts: 1 }).where('id', '=', rows[2]!.id).execute();
  await q.resume();
  await q.idle();
  rows = await db.selectFrom('jobs').selectAll().orderBy('created_at').execute();
  t.same(
    rows.map((r) => r.state),
    ['done', 'done', 'done', 'done'],
    'after resume everything runs, the stale running one too',
  );
  t.equal(rows[2]!.last_error, null, 'not counted as a crash');
  await q.stop();
});
