import type { Transaction } from 'kysely';
import { type Db, deferDurability, holdConnection, rowLockedTransaction } from '../../platform/db/database.js';
import { isPostgres } from '../../platform/db/dialect.js';
import type { Database } from '../../platform/db/schema.js';
import { openJobSavepoint, releaseJobSavepoint, rollbackToJobSavepoint } from './heartbeat.repo.js';

type Job<T> = { run: (trx: Transaction<Database>) => Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void };

/** Most writes one commit carries. */
const MAX_BATCH = 64;

/**
 * Group commit for the heartbeat path. Every commit waits for an fsync of the WAL (0.4-10 ms
 * on the disks we run on; off the event loop: platform/db/database.ts), so heartbeats
 * arriving together share one transaction: each caller's promise resolves only after the
 * fsync that follows the commit holding its writes, so "durable before the reply" still
 * holds. The next batch may commit while that fsync runs (deferDurability). Each job runs inside its own
 * savepoint: a job that throws has its writes rolled back and its caller rejected with
 * its error, while the others commit and resolve. Only a failure of the transaction
 * itself (BEGIN, COMMIT, or a rollback to a savepoint) fails the whole batch.
 *
 * On PostgreSQL each job is a transaction of its own, on a pooled connection: statements
 * there are round trips, so a batch would hold its one connection (and, but for row-locked
 * jobs, the writer lock) for one round trip per statement of every job, while jobs of their
 * own run side by side and the server groups their commits' WAL flushes itself.
 */
class GroupCommit {
  private queue: Job<unknown>[] = [];
  private flushing = false;
  private scheduled = false;
  /** Commits made and jobs they carried, for benchmarks (scripts/bench/heartbeat.ts). */
  readonly stats = { commits: 0, jobs: 0 };

  /** PostgreSQL: each job a transaction of its own (see above). */
  private readonly separate: boolean;

  constructor(private readonly db: Db) {
    this.separate = isPostgres(db);
  }

  submit<T>(run: (trx: Transaction<Database>) => Promise<T>, rowLocked: boolean): Promise<T> {
    if (this.separate) {
      this.stats.commits++;
      this.stats.jobs++;
      return (rowLocked ? rowLockedTransaction(this.db) : this.db.transaction()).execute(run);
    }
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ run, resolve, reject } as Job<unknown>);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.flushing || this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.flushing || this.queue.length === 0) return;
    this.flushing = true;
    const batch = this.queue.splice(0, MAX_BATCH);
    const commit: { durable?: Promise<void> } = {};
    try {
      const outcomes = await this.db.transaction().execute(async (trx) => {
        const out: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
        // The jobs' prepared statements (and the savepoints) run on the handle at once.
        const release = holdConnection(this.db, trx);
        try {
          await this.runJobs(trx, batch, out);
        } finally {
          release();
        }
        deferDurability(this.db, commit);
        this.stats.commits++;
        this.stats.jobs += batch.length;
        return out;
      });
      // Committed: the next batch may begin while this one's fsync runs (pipelined).
      this.flushing = false;
      if (this.queue.length) this.schedule();
      await commit.durable;
      // After the fsync: every successful job's writes are durable now.
      batch.forEach((job, i) => {
        const o = outcomes[i]!;
        if (o.ok) job.resolve(o.value);
        else job.reject(o.error);
      });
    } catch (err) {
      commit.durable?.catch(() => undefined); // a failed commit's fsync, if one started, is nobody's to wait for
      for (const job of batch) job.reject(err);
    } finally {
      if (this.flushing) {
        this.flushing = false;
        if (this.queue.length) this.schedule();
      }
    }
  }

  /** Each job in its own savepoint: one that throws has its writes undone and keeps its error. */
  private async runJobs(trx: Transaction<Database>, batch: Job<unknown>[], out: ({ ok: true; value: unknown } | { ok: false; error: unknown })[]) {
    for (const job of batch) {
      await openJobSavepoint(trx);
      try {
        const value = await job.run(trx);
        await releaseJobSavepoint(trx);
        out.push({ ok: true, value });
      } catch (error) {
        // Undo this job's writes only. If that fails, the transaction is gone (SQLite rolls
        // back on some errors by itself): the batch fails, with this job's error.
        try {
          await rollbackToJobSavepoint(trx);
          await releaseJobSavepoint(trx);
        } catch {
          throw error;
        }
        out.push({ ok: false, error });
      }
    }
  }
}

const committers = new WeakMap<Db, GroupCommit>();

/** groupCommit's options for a job whose writes are row-scoped (database.ts rowLockedTransaction). */
export const ROW_LOCKED = { rowLocked: true } as const;

/**
 * Runs `run` inside a transaction shared with other writes submitted at the same moment.
 * `rowLocked`: its writes are row-scoped (database.ts rowLockedTransaction), which on
 * PostgreSQL lets it run without the writer lock.
 */
export function groupCommit<T>(db: Db, run: (trx: Transaction<Database>) => Promise<T>, options: { rowLocked?: boolean } = {}): Promise<T> {
  let gc = committers.get(db);
  if (!gc) {
    gc = new GroupCommit(db);
    committers.set(db, gc);
  }
  return gc.submit(run, options.rowLocked ?? false);
}

/** How many group commits `db` has made and how many jobs they carried (benchmarks: heartbeats per commit). */
export function groupCommitStats(db: Db): { commits: number; jobs: number } {
  return { ...(committers.get(db)?.stats ?? { commits: 0, jobs: 0 }) };
}
