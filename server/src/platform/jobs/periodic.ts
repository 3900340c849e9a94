import type { Logger } from 'pino';

interface Task {
  name: string;
  everyMs: number;
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

  constructor(private readonly logger: Logger) {}

  every(name: string, everyMs: number, run: Task['run']): void {
    if (this.tasks.has(name)) throw new Error(`periodic task ${name} registered twice`);
    const task: Task = { name, everyMs, run };
    this.tasks.set(name, task);
    if (this.started) this.schedule(task);
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
    task.timer = setInterval(() => void this.execute(task), task.everyMs);
    task.timer.unref();
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
