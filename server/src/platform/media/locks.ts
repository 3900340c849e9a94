/**
 * In-process locks by key, with takeover: a holder may say how to stop it, and a newer
 * request for the same key asks it to (tusd's lock release: a PATCH stalled on a dead
 * connection gives way to the client's resume instead of blocking it). Waiting has no time
 * bound: whoever holds a key runs alone until it releases, so two requests never touch the
 * same upload's part file, and a media file is never removed while it is being adopted.
 * One Node process owns the data directory, so in-process locks are enough.
 */
interface Holder {
  stop?: () => void;
}

interface Entry {
  /** Settles when the last holder in line releases. */
  tail: Promise<void>;
  holder: Holder | null;
  /** Requests queued behind the holder. */
  waiting: number;
}

export type Release = () => void;

export class KeyedLocks {
  private readonly entries = new Map<string, Entry>();

  /** True while someone holds or waits for `key`. */
  busy(key: string): boolean {
    return this.entries.has(key);
  }

  /**
   * Waits for `key`, then holds it until the answer is called. A holder that gave a `stop`
   * is asked to stop when a newer request arrives (and at once if one is already waiting
   * when it gets the lock); holders without one are waited for.
   */
  async acquire(key: string, stop?: () => void): Promise<Release> {
    let entry = this.entries.get(key);
    if (!entry) {
      entry = { tail: Promise.resolve(), holder: null, waiting: 0 };
      this.entries.set(key, entry);
    }
    const e = entry;
    const before = e.tail;
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    e.tail = before.then(() => mine);
    e.waiting++;
    e.holder?.stop?.();
    await before;
    e.waiting--;
    const holder: Holder = { stop };
    e.holder = holder;
    if (e.waiting > 0) stop?.();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      if (e.holder === holder) e.holder = null;
      if (e.waiting === 0 && this.entries.get(key) === e) this.entries.delete(key);
      release();
    };
  }

  /** Holds `key` only if nobody holds or waits for it; null otherwise. */
  tryAcquire(key: string): Release | null {
    if (this.entries.has(key)) return null;
    let release!: () => void;
    const e: Entry = { tail: new Promise<void>((resolve) => (release = resolve)), holder: {}, waiting: 0 };
    this.entries.set(key, e);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      e.holder = null;
      if (e.waiting === 0 && this.entries.get(key) === e) this.entries.delete(key);
      release();
    };
  }

  /** Runs `fn` holding every key (taken in sorted order, so two callers never deadlock). */
  async withAll<T>(keys: Iterable<string>, fn: () => Promise<T>): Promise<T> {
    const sorted = [...new Set(keys)].sort();
    const releases: Release[] = [];
    try {
      for (const k of sorted) releases.push(await this.acquire(k));
      return await fn();
    } finally {
      for (const r of releases.reverse()) r();
    }
  }
}
