import type { Logger } from 'pino';

interface Task {
  name: string;
  everyMs: number;
  /** Ticks of its timer this instance ran (tests: with several instances, each tick runs on one). */
  ticksRun: number;
  run: () => Promise<void> | void;
  timer?: NodeJS.Timeout;
  running?: Promise<void>;
}

/**
 * Light periodic maintenance in the server process (pruning, expiring): each task runs
 * every `everyMs`, never overlapping itself, errors logged. Started by main.ts after the
 * server listens and stopped (waiting for a running task) at shutdown. Tests start it
 * only when they want it, and can call `runNow(name)` instead of waiting.
 */
export class PeriodicTasks {
  private readonly tasks = new Map<string, Task>();
  private readonly stopHooks: (() => Promise<void> | void)[] = [];
  private readonly background = new Set<Promise<unknown>>();
  private started = false;
  private stopping = false;
  /** Asked before a timer's tick runs: false when another instance has this tick (platform/cluster.ts). */
  private claim: ((name: string, everyMs: number) => Promise<boolean>) | null = null;

  constructor(private readonly logger: Logger) {}

  every(name: string, everyMs: number, run: Task['run']): void {
    if (this.tasks.has(name)) throw new Error(`periodic task ${name} registered twice`);
    const task: Task = { name, everyMs, run, ticksRun: 0 };
    this.tasks.set(name, task);
    if (this.started) this.schedule(task);
  }

  /**
   * Several instances share the database: a timer's tick runs only when `claim` says it is
   * this instance's (`runNow` always runs). A claim that fails (the database is away) skips
   * the tick, as another instance may have it.
   */
  claimTicksWith(claim: (name: string, everyMs: number) => Promise<boolean>): void {
    this.claim = claim;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    for (const task of this.tasks.values()) this.schedule(task);
  }

  /** Runs a task at once (tests, or a console action); waits for it. */
  async runNow(name: string): Promise<void> {
    const task = this.tasks.get(name);
    if (!task) throw new Error(`no periodic task ${name}`);
    await this.execute(task);
  }

  /** How many of the task's timer ticks this instance ran (tests). */
  ticksRun(name: string): number {
    return this.tasks.get(name)?.ticksRun ?? 0;
  }

  /** Runs at stop(), before it resolves: background workers (the job queue) stop with the tasks. */
  onStop(hook: () => Promise<void> | void): void {
    this.stopHooks.push(hook);
  }

  /**
   * Work started outside a tick that must end before the app's database closes (a fetch a
   * change kicked off): stop() waits for it. Long loops check `isStopping` to quit early.
   */
  track<T>(work: Promise<T>): Promise<T> {
    this.background.add(work);
    void work.then(
      () => this.background.delete(work),
      () => this.background.delete(work),
    );
    return work;
  }

  /** True once stop() was called: background loops end at their next step. */
  get isStopping(): boolean {
    return this.stopping;
  }

  async stop(): Promise<void> {
    this.started = false;
    this.stopping = true;
    for (const task of this.tasks.values()) clearInterval(task.timer);
    await Promise.all([...this.tasks.values()].map((t) => t.running));
    await Promise.allSettled([...this.background]);
    await Promise.allSettled(this.stopHooks.map((h) => h()));
  }

  private schedule(task: Task): void {
    task.timer = setInterval(() => void this.tick(task), task.everyMs);
    task.timer.unref();
  }

  private async tick(task: Task): Promise<void> {
    if (task.running) return; // still running its last tick: this one is skipped, claimed or not
    if (this.claim) {
      try {
        if (!(await this.claim(task.name, task.everyMs))) return;
      } catch (err) {
        this.logger.warn({ err, task: task.name }, 'periodic task: could not claim its tick');
        return;
      }
      if (!this.started) return;
    }
    task.ticksRun++;
    await this.execute(task);
  }

  private execute(task: Task): Promise<void> {
    if (task.running) return task.running;
    const running = (async () => {
      try {
        await task.run();
      } catch (err) {
        this.logger.error({ err, task: task.name }, 'periodic task failed');
      }
    })();
    task.running = running;
    // Cleared after assignment, even when run() finished synchronously.
    void running.finally(() => {
      if (task.running === running) task.running = undefined;
    });
    return running;
  }
}
