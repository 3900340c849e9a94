import type { Logger } from 'pino';
import { v7 as uuidv7 } from 'uuid';
import { type ExpressionBuilder, sql } from 'kysely';
import type { Cluster } from '../cluster.js';
import { deleteInBatches } from '../db/batch.js';
import type { Db } from '../db/database.js';
import { isPostgres } from '../db/dialect.js';
import type { Database, JobsTable } from '../db/schema.js';

/** A failure that retrying cannot fix (a corrupt file, an unsupported codec): no retry. */
export class PermanentJobError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PermanentJobError';
  }
}

export interface JobContext {
  id: string;
  attempt: number;
  /** Reports progress 0..1 (stored on the job, throttled). */
  progress(fraction: number): void;
  /** Aborted when the queue stops: long work should give up and will be retried at the next start. */
  signal: AbortSignal;
}

export interface JobHandler {
  // biome-ignore lint/suspicious/noExplicitAny: each kind's handler declares its payload's type (payloads are JSON from the jobs table)
  run(payload: any, ctx: JobContext): Promise<void>;
  /** Called once when the job fails for good (after its last attempt). */
  // biome-ignore lint/suspicious/noExplicitAny: as run's
  onFailed?(payload: any, error: string): Promise<void>;
}

export interface EnqueueOptions {
  maxAttempts?: number;
  /** Delay before the first run, ms. */
  delayMs?: number;
}

export interface QueueOptions {
  concurrency: number;
  /** Backoff of the n-th retry: base * 2^(n-1), capped. */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** Finished jobs are kept this long, then pruned. */
  keepDoneMs?: number;
  /**
   * The instances sharing the database (platform/cluster.ts): a claimed job names this
   * process, a job is run again only when the process that held it is gone, and an enqueue
   * wakes the other instances' queues. Without it: a lone process.
   */
  cluster?: Cluster;
}

const iso = (ms = Date.now()) => new Date(ms).toISOString();

/** `last_error` of a job queued again after a crash; the count in brackets adds up crashes. */
const CRASH_NOTE = 'the server stopped while this job ran';

function crashCount(lastError: string | null): number {
  const m = lastError?.startsWith(CRASH_NOTE) ? /\((\d+)\)$/.exec(lastError) : null;
  return m ? Number(m[1]) : 0;
}

/**
 * Jobs persisted in SQLite and run in this process: bounded concurrency, retries with
 * exponential backoff, progress, and restart safety (a job found `running` at start was
 * interrupted and is queued again). Claiming a job and recording its outcome are short
 * single statements; the work itself never runs inside a transaction.
 */
export class JobQueue {
  private readonly handlers = new Map<string, JobHandler>();
  private readonly running = new Map<string, Promise<void>>();
  private abort = new AbortController();
  private started = false;
  private stopped = false;
  /** While paused (a live restore swaps the data): nothing is claimed, running jobs were interrupted. */
  private paused = false;
  private timer: NodeJS.Timeout | null = null;
  private readonly idleWaiters: (() => void)[] = [];
  private readonly backoffBaseMs: number;
  private readonly backoffMaxMs: number;
  private readonly keepDoneMs: number;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    private readonly options: QueueOptions,
  ) {
    this.backoffBaseMs = options.backoffBaseMs ?? 2_000;
    this.backoffMaxMs = options.backoffMaxMs ?? 10 * 60_000;
    this.keepDoneMs = options.keepDoneMs ?? 7 * 24 * 3_600_000;
    // Another instance enqueued: a job may be ours to take.
    options.cluster?.on('jobs.kick', () => this.kick());
  }

  /** What `locked_by` says for this process. */
  private get holder(): string {
    return String(this.options.cluster?.key ?? 0);
  }

  /** True once stop() was called: no job will be claimed any more in this process. */
  get isStopped(): boolean {
    return this.stopped;
  }

  register(kind: string, handler: JobHandler): void {
    if (this.handlers.has(kind)) throw new Error(`job kind ${kind} registered twice`);
    this.handlers.set(kind, handler);
  }

  /** The row to insert for a new job; insert it with `db` or inside the caller's transaction, then `kick()`. */
  static row(kind: string, payload: unknown, options: EnqueueOptions = {}): JobsTable {
    const now = Date.now();
    return {
      id: uuidv7(),
      kind,
      payload: JSON.stringify(payload),
      state: 'queued',
      attempts: 0,
      max_attempts: options.maxAttempts ?? 3,
      run_after: iso(now + (options.delayMs ?? 0)),
      progress: null,
      last_error: null,
      locked_at: null,
      locked_by: null,
      created_at: iso(now),
      updated_at: iso(now),
    };
  }

  async enqueue(kind: string, payload: unknown, options: EnqueueOptions = {}): Promise<string> {
    const row = JobQueue.row(kind, payload, options);
    await this.db.insertInto('jobs').values(row).execute();
    this.kick();
    this.options.cluster?.publish('jobs.kick', null);
    return row.id;
  }

  /**
   * Starts working. Jobs left `running` by a previous process were interrupted by a crash
   * (a clean stop re-queues its jobs): the crash counts as an attempt, so a job that kills
   * the process (a decoder bug, the OOM killer) cannot loop forever. Below its
   * `max_attempts` it is queued again; at it, it fails (its handler's onFailed runs, e.g.
   * the asset is marked failed) with a reason saying how often the server stopped under it.
   */
  async start(): Promise<void> {
    if (this.started || this.stopped) return;
    this.started = true;
    await this.recoverInterrupted();
    this.kick();
  }

  /**
   * Jobs left `running` by a process that is gone (this one's previous life, or another
   * instance that stopped or crashed: `cluster.isAlive`), handled as start() says. Run at
   * start, and by the instances sharing a database every so often (installMedia), so a dead
   * instance's jobs run again elsewhere. Answers how many it found.
   */
  async recoverInterrupted(): Promise<number> {
    const cluster = this.options.cluster;
    const candidates = await this.db.selectFrom('jobs').selectAll().where('state', '=', 'running').execute();
    let found = 0;
    for (const job of candidates) {
      const key = Number(job.locked_by);
      if (job.locked_by !== null && cluster && (await cluster.isAlive(key))) continue;
      if (job.locked_by === this.holder && this.running.has(job.id)) continue;
      found++;
      const crashes = crashCount(job.last_error) + 1;
      const now = iso();
      // Only while it is still the same claim (another instance may be recovering it too).
      const sameClaim = (eb: ExpressionBuilder<Database, 'jobs'>) =>
        eb.and([
          eb('id', '=', job.id),
          eb('state', '=', 'running'),
          job.locked_at === null ? eb('locked_at', 'is', null) : eb('locked_at', '=', job.locked_at),
        ]);
      if (job.attempts >= job.max_attempts) {
        const reason = `processing stopped the server ${crashes === 1 ? 'once' : `${crashes} times`} (it was running when the server stopped or crashed); not retried after ${job.attempts} attempt${job.attempts === 1 ? '' : 's'}`;
        const r = await this.db
          .updateTable('jobs')
          .set({ state: 'failed', last_error: reason, locked_at: null, locked_by: null, updated_at: now })
          .where(sameClaim)
          .executeTakeFirst();
        if (Number(r.numUpdatedRows) === 0) continue;
        this.logger.warn({ job: job.id, kind: job.kind, attempts: job.attempts, crashes }, 'job failed: the server stopped while it ran');
        const handler = this.handlers.get(job.kind);
        try {
          await handler?.onFailed?.(JSON.parse(job.payload), reason);
        } catch (err) {
          this.logger.error({ err, job: job.id }, 'job failure handler failed');
        }
      } else {
        const r = await this.db
          .updateTable('jobs')
          .set({ state: 'queued', locked_at: null, locked_by: null, last_error: `${CRASH_NOTE} (${crashes})`, updated_at: now })
          .where(sameClaim)
          .executeTakeFirst();
        if (Number(r.numUpdatedRows) === 0) continue;
        this.logger.warn({ job: job.id, kind: job.kind, attempts: job.attempts, crashes }, 'job was running when the server stopped; queued again');
      }
    }
    if (found > 0) this.kick();
    return found;
  }

  /** Stops taking jobs, aborts running ones (they are retried at the next start) and waits for them. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.abort.abort();
    await Promise.allSettled([...this.running.values()]);
  }

  /**
   * Interrupts running jobs and claims nothing until resume() (a live restore is about to
   * swap the database and media store). Interrupted jobs go back to `queued` with their
   * attempt given back, like at shutdown.
   */
  async pause(): Promise<void> {
    if (this.paused || this.stopped) return;
    this.paused = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.abort.abort();
    await Promise.allSettled([...this.running.values()]);
  }

  /**
   * Works again, on whatever database is live now. Jobs it holds as `running` were running
   * when the restored backup was taken: their processing is gone, so they are queued again
   * (not counted as a crash).
   */
  async resume(): Promise<void> {
    if (!this.paused || this.stopped) return;
    this.abort = new AbortController();
    await this.db.updateTable('jobs').set({ state: 'queued', locked_at: null, updated_at: iso() }).where('state', '=', 'running').execute();
    this.paused = false;
    this.kick();
  }

  /** Resolves when nothing is queued-and-due, being claimed or running (tests, benchmarks). */
  async idle(): Promise<void> {
    // A claim in flight (filling) has made its row `running` before the job is in `running`:
    // it waits for its fsync like any write.
    if (this.running.size === 0 && !this.filling && !(await this.hasDue())) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  /** Looks for due jobs and runs as many as concurrency allows. */
  kick(): void {
    if (!this.started || this.stopped || this.paused) return;
    void this.fill().catch((err: unknown) => this.logger.error({ err }, 'job queue failed to claim work'));
  }

  /** Deletes finished and failed jobs older than `keepMs` (default: the queue's keepDoneMs); answers how many. */
  async prune(keepMs = this.keepDoneMs): Promise<number> {
    const cutoff = iso(Date.now() - keepMs);
    return deleteInBatches(
      this.db,
      (limit) => sql`delete from jobs where id in (select id from jobs where state in ('done', 'failed') and updated_at < ${cutoff} limit ${limit})`,
    );
  }

  private async hasDue(): Promise<boolean> {
    const row = await this.db.selectFrom('jobs').select('id').where('state', '=', 'queued').where('run_after', '<=', iso()).executeTakeFirst();
    return Boolean(row);
  }

  private filling = false;

  private async fill(): Promise<void> {
    if (this.filling) return;
    this.filling = true;
    try {
      while (!this.stopped && !this.paused && this.running.size < this.options.concurrency) {
        const job = await this.claim();
        if (!job) break;
        const run = this.execute(job).finally(() => {
          this.running.delete(job.id);
          this.kick();
          void this.afterSettle();
        });
        this.running.set(job.id, run);
      }
    } finally {
      this.filling = false;
    }
    await this.scheduleNext();
    if (this.running.size === 0) await this.afterSettle();
  }

  private async afterSettle(): Promise<void> {
    // While filling, fill() settles the waiters itself (or the jobs it claims do).
    if (this.running.size > 0 || this.filling || this.idleWaiters.length === 0) return;
    if (await this.hasDue()) return;
    for (const w of this.idleWaiters.splice(0)) w();
  }

  /**
   * Claims the next due job: a select and a conditional update (better-sqlite3 runs them one
   * after the other, nothing between); on PostgreSQL one statement whose `for update skip
   * locked` lets instances claiming at once take different jobs.
   */
  private async claim(): Promise<JobsTable | undefined> {
    const now = iso();
    const handled = [...this.handlers.keys()];
    if (handled.length === 0) return undefined;
    const due = (db: Db) =>
      db
        .selectFrom('jobs')
        .select('id')
        .where('state', '=', 'queued')
        .where('run_after', '<=', now)
        .where('kind', 'in', handled)
        .orderBy('run_after')
        .orderBy('id')
        .limit(1);
    const take = { state: 'running' as const, locked_at: now, locked_by: this.holder, updated_at: now, progress: 0 };
    if (isPostgres(this.db)) {
      return this.db
        .updateTable('jobs')
        .set((eb) => ({ ...take, attempts: eb('attempts', '+', 1) }))
        .where('id', '=', due(this.db).forUpdate().skipLocked())
        .returningAll()
        .executeTakeFirst();
    }
    const next = await due(this.db).executeTakeFirst();
    if (!next) return undefined;
    return this.db
      .updateTable('jobs')
      .set((eb) => ({ ...take, attempts: eb('attempts', '+', 1) }))
      .where('id', '=', next.id)
      .where('state', '=', 'queued')
      .returningAll()
      .executeTakeFirst();
  }

  /** Wakes up when the earliest delayed job becomes due. */
  private async scheduleNext(): Promise<void> {
    if (this.stopped || this.paused) return;
    const next = await this.db.selectFrom('jobs').select('run_after').where('state', '=', 'queued').orderBy('run_after').limit(1).executeTakeFirst();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (!next) return;
    const wait = Math.max(0, Date.parse(next.run_after) - Date.now());
    if (wait === 0 && this.running.size >= this.options.concurrency) return; // a finishing job kicks again
    this.timer = setTimeout(() => this.kick(), Math.min(wait + 5, 2 ** 31 - 1));
    this.timer.unref();
  }

  private async execute(job: JobsTable): Promise<void> {
    const handler = this.handlers.get(job.kind)!;
    const log = this.logger.child({ job: job.id, kind: job.kind, attempt: job.attempts });
    let lastWrite = 0;
    let pending: number | null = null;
    const writeProgress = (fraction: number) => {
      pending = Math.max(0, Math.min(1, fraction));
      const now = Date.now();
      if (now - lastWrite < 500) return;
      lastWrite = now;
      const value = pending;
      void this.db
        .updateTable('jobs')
        .set({ progress: value })
        .where('id', '=', job.id)
        .execute()
        .catch(() => {});
    };
    try {
      await handler.run(JSON.parse(job.payload), { id: job.id, attempt: job.attempts, progress: writeProgress, signal: this.abort.signal });
      await this.db
        .updateTable('jobs')
        .set({ state: 'done', progress: 1, last_error: null, locked_at: null, updated_at: iso() })
        .where('id', '=', job.id)
        .execute();
      log.debug('job done');
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (this.stopped || this.paused) {
        // Interrupted by shutdown or a restore: not a failure, run again (same attempt count).
        await this.db
          .updateTable('jobs')
          .set((eb) => ({ state: 'queued', attempts: eb('attempts', '-', 1), locked_at: null, updated_at: iso() }))
          .where('id', '=', job.id)
          .execute()
          .catch(() => {});
        return;
      }
      const permanent = err instanceof PermanentJobError;
      const final = permanent || job.attempts >= job.max_attempts;
      if (final) {
        log.warn({ err: message }, 'job failed');
        await this.db.updateTable('jobs').set({ state: 'failed', last_error: message, locked_at: null, updated_at: iso() }).where('id', '=', job.id).execute();
        try {
          await handler.onFailed?.(JSON.parse(job.payload), message);
        } catch (e) {
          log.error({ err: e }, 'job failure handler failed');
        }
      } else {
        const delay = Math.min(this.backoffMaxMs, this.backoffBaseMs * 2 ** (job.attempts - 1));
        log.info({ err: message, retryInMs: delay }, 'job failed; will retry');
        await this.db
          .updateTable('jobs')
          .set({ state: 'queued', last_error: message, locked_at: null, run_after: iso(Date.now() + delay), updated_at: iso() })
          .where('id', '=', job.id)
          .execute();
      }
    }
  }
}

/**
 * The queue at a glance (the `jobs` section of `GET /system/status`): depth, running,
 * retries, failures of the last 24 hours and the oldest waiting job. Aggregates over the
 * (state, run_after) index; done jobs are only counted.
 */
export async function queueStatus(db: Db, now = Date.now()) {
  const dayAgo = iso(now - 24 * 3_600_000);
  const [byState, byKind, failed24h, oldest, due, retrying, lastFailure] = await Promise.all([
    db
      .selectFrom('jobs')
      .select((eb) => ['state', eb.fn.countAll<number>().as('n')])
      .groupBy('state')
      .execute(),
    db
      .selectFrom('jobs')
      .select((eb) => ['kind', 'state', eb.fn.countAll<number>().as('n')])
      .where('state', 'in', ['queued', 'running'])
      .groupBy(['kind', 'state'])
      .execute(),
    db
      .selectFrom('jobs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('state', '=', 'failed')
      .where('updated_at', '>=', dayAgo)
      .executeTakeFirst(),
    db
      .selectFrom('jobs')
      .select((eb) => eb.fn.min('created_at').as('at'))
      .where('state', '=', 'queued')
      .executeTakeFirst(),
    db
      .selectFrom('jobs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('state', '=', 'queued')
      .where('run_after', '<=', iso(now))
      .executeTakeFirst(),
    db
      .selectFrom('jobs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('state', '=', 'queued')
      .where('attempts', '>', 0)
      .executeTakeFirst(),
    db.selectFrom('jobs').select(['kind', 'last_error', 'updated_at']).where('state', '=', 'failed').orderBy('updated_at', 'desc').limit(1).executeTakeFirst(),
  ]);
  const count = (state: string) => Number(byState.find((r) => r.state === state)?.n ?? 0);
  const kinds: Record<string, { queued: number; running: number }> = {};
  for (const r of byKind) {
    const k = (kinds[r.kind] ??= { queued: 0, running: 0 });
    k[r.state as 'queued' | 'running'] = Number(r.n);
  }
  const oldestAt = (oldest?.at as string | null | undefined) ?? null;
  return {
    queued: count('queued'),
    /** Queued and due now (the rest wait for a retry backoff or a delay). */
    due: Number(due?.n ?? 0),
    /** Queued again after a failed attempt. */
    retrying: Number(retrying?.n ?? 0),
    running: count('running'),
    done: count('done'),
    failed: count('failed'),
    failedLast24h: Number(failed24h?.n ?? 0),
    oldestQueuedAt: oldestAt,
    oldestQueuedAgeSec: oldestAt ? Math.max(0, Math.round((now - Date.parse(oldestAt)) / 1000)) : null,
    lastFailure: lastFailure ? { kind: lastFailure.kind, error: lastFailure.last_error, at: lastFailure.updated_at } : null,
    byKind: kinds,
  };
}
