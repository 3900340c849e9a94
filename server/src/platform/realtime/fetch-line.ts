/**
 * The line of screens told `manifest.changed` (docs/decisions.md, "Telling many screens in
 * turn"). At most `window` screens are told and still to fetch; the others wait, and each
 * fetch of a told screen tells the next. The window adapts to the server, as a TCP window
 * does to its path: each fetch of a told screen while screens wait and the event loop ran on
 * time adds a place (so the window doubles each round of fetches, up to `maxWindow`, and fast
 * players are not held back by the line); when the loop runs late (requests queueing) it
 * halves (down to `minWindow`), so heartbeats do not wait behind a burst of fetches. Growth
 * comes from fetches served, not from time passing: a window that grew by the clock would be
 * wide open before the first fetches of a burst arrive to slow the loop.
 */

export interface FetchLineOptions {
  /** Screens told and still to fetch at most, to begin with. */
  window?: number;
  minWindow?: number;
  maxWindow?: number;
  /** A told screen that has not fetched within this long gives its place to the next. */
  waitMs?: number;
}

const WINDOW = 64;
const MIN_WINDOW = 16;
const MAX_WINDOW = 4096;
const WAIT_MS = 2_000;
/** How often the line looks at the event loop while screens are told or waiting. */
const TICK_MS = 25;
/** Event loop lateness (beyond the tick) under which the window may grow, and over which it halves. */
const ON_TIME_MS = 8;
const LATE_MS = 25;

/** The window after a tick whose timer ran `lateMs` late: halved when late, else as it was. */
export function afterTick(window: number, lateMs: number, min: number): number {
  return lateMs > LATE_MS ? Math.max(min, Math.floor(window / 2)) : window;
}

/** The window after a told screen fetched: one place more when screens wait and the last tick ran on time. */
export function afterFetch(window: number, lastLateMs: number, waiting: boolean, max: number): number {
  return waiting && lastLateMs < ON_TIME_MS ? Math.min(max, window + 1) : window;
}

export class FetchLine {
  private window: number;
  private readonly initial: number;
  private readonly min: number;
  private readonly max: number;
  private readonly waitMs: number;
  /** Told and still to fetch, with when their place lapses. */
  private readonly told = new Map<string, number>();
  /** Waiting to be told, in turn, with the newest revision for each. */
  private readonly waiting = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private lastTick = 0;
  /** How late the last tick ran (0 before the first). */
  private late = 0;

  /** `tell` sends the message; false when the screen has no socket (it then takes no place). */
  constructor(
    private readonly tell: (screenId: string, revision: number) => boolean,
    options: FetchLineOptions = {},
  ) {
    this.min = Math.max(1, options.minWindow ?? MIN_WINDOW);
    this.max = Math.max(this.min, options.maxWindow ?? MAX_WINDOW);
    this.initial = Math.min(this.max, Math.max(this.min, options.window ?? WINDOW));
    this.window = this.initial;
    this.waitMs = options.waitMs ?? WAIT_MS;
  }

  /** Tells the screen now if it holds a place already or one is free, else puts it in line (once, newest revision). */
  push(screenId: string, revision: number): void {
    if (this.told.has(screenId) || this.told.size < this.window) this.tellNow(screenId, revision);
    else {
      this.waiting.delete(screenId);
      this.waiting.set(screenId, revision);
      this.start();
    }
  }

  /** The screen fetched its manifest at `revision`: out of the line if that is what it waited for; its place goes to the next. */
  fetched(screenId: string, revision: number): void {
    const waits = this.waiting.get(screenId);
    if (waits !== undefined && waits <= revision) this.waiting.delete(screenId);
    if (!this.told.delete(screenId)) return;
    this.window = afterFetch(this.window, this.late, this.waiting.size > 0, this.max);
    this.tellWaiting();
  }

  counts(): { fetching: number; waiting: number; window: number } {
    return { fetching: this.told.size, waiting: this.waiting.size, window: this.window };
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.told.clear();
    this.waiting.clear();
  }

  private tellNow(screenId: string, revision: number): void {
    if (!this.tell(screenId, revision)) return;
    this.told.set(screenId, Date.now() + this.waitMs);
    this.start();
  }

  private tellWaiting(): void {
    for (const [id, revision] of this.waiting) {
      if (this.told.size >= this.window) return;
      this.waiting.delete(id);
      this.tellNow(id, revision);
    }
  }

  private start(): void {
    if (this.timer) return;
    this.lastTick = performance.now();
    this.late = 0;
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
  }

  private tick(): void {
    const at = performance.now();
    this.late = at - this.lastTick - TICK_MS;
    this.lastTick = at;
    const now = Date.now();
    for (const [id, until] of this.told) if (until <= now) this.told.delete(id);
    this.window = afterTick(this.window, this.late, this.min);
    this.tellWaiting();
    if (this.told.size === 0 && this.waiting.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
      this.window = this.initial;
    }
  }
}
