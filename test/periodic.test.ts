import t from 'tap';
import { PeriodicTasks } from '../server/src/platform/jobs/periodic.js';
import { createLogger } from '../server/src/platform/log.js';

t.test('periodic tasks run on their interval, never overlap, survive errors, stop cleanly', async (t) => {
  const tasks = new PeriodicTasks(createLogger('silent'));
  let runs = 0;
  let concurrent = 0;
  let maxConcurrent = 0;
  let failures = 0;
  tasks.every('slow', 10, async () => {
    concurrent++;
    maxConcurrent = Math.max(maxConcurrent, concurrent);
    await new Promise((r) => setTimeout(r, 35));
    concurrent--;
    runs++;
  });
  tasks.every('flaky', 10, () => {
    failures++;
    throw new Error('boom');
  });
  t.throws(() => tasks.every('slow', 10, () => {}), /twice/);
  tasks.start();
  // Wait for the behaviour rather than a fixed time: a loaded machine may be slow.
  const deadline = Date.now() + 10_000;
  while ((runs < 2 || failures < 2) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  await tasks.stop();
  const after = runs;
  t.ok(runs >= 2, `ran ${runs} times`);
  t.equal(maxConcurrent, 1, 'a task never overlaps itself');
  t.ok(failures >= 2, 'a failing task keeps being scheduled');
  await new Promise((r) => setTimeout(r, 60));
  t.equal(runs, after, 'nothing runs after stop');
  await tasks.runNow('slow');
  t.equal(runs, after + 1, 'runNow runs it at once');
  await t.rejects(tasks.runNow('nope'));
});

t.test('stop waits for tracked background work and tells loops to end', async (t) => {
  const tasks = new PeriodicTasks(createLogger('silent'));
  let release!: () => void;
  let finished = false;
  const work = tasks.track(
    new Promise<void>((resolve) => {
      release = resolve;
    }).then(() => {
      finished = true;
    }),
  );
  t.equal(tasks.isStopping, false);
  const stopped = tasks.stop().then(() => 'stopped');
  t.equal(tasks.isStopping, true, 'a loop asking now learns it should end');
  const early = await Promise.race([stopped, new Promise((r) => setTimeout(() => r('waiting'), 50))]);
  t.equal(early, 'waiting', 'stop() has not resolved while the work runs');
  release();
  t.equal(await stopped, 'stopped');
  t.ok(finished, 'the work ended before stop() resolved');
  await work;
  // A failed piece of work does not make stop() fail.
  const other = new PeriodicTasks(createLogger('silent'));
  other.track(Promise.reject(new Error('boom'))).catch(() => {});
  await other.stop();
  t.pass('stop resolves after a failed background promise');
});
