import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

const require = createRequire(import.meta.url);

/** How often the worker checkpoints each database (a PASSIVE checkpoint with nothing new to copy costs microseconds). */
const EVERY_MS = 200;
/** The worker stops after this long without a commit to any registered database. */
const IDLE_STOP_MS = 10_000;

const WORKER = `
  const { parentPort, workerData } = require('node:worker_threads');
  const Database = require(workerData.module);
  const dbs = new Map();
  const closeAll = () => {
    for (const db of dbs.values()) {
      try { db.close(); } catch {}
    }
    dbs.clear();
  };
  parentPort.on('message', (m) => {
    if (m.type === 'open') {
      try {
        const db = new Database(m.file, { fileMustExist: true });
        db.pragma('busy_timeout = 1000');
        dbs.set(m.file, db);
      } catch (err) {
        parentPort.postMessage({ type: 'failed', file: m.file, message: String((err && err.message) || err) });
      }
    } else if (m.type === 'close') {
      const db = dbs.get(m.file);
      dbs.delete(m.file);
      try { if (db) db.close(); } catch {}
      parentPort.postMessage({ type: 'closed', id: m.id });
    } else if (m.type === 'stop') {
      closeAll();
      process.exit(0);
    }
  });
  setInterval(() => {
    for (const [file, db] of dbs) {
      try {
        db.pragma('wal_checkpoint(PASSIVE)');
      } catch (err) {
        parentPort.postMessage({ type: 'failed', file, message: String((err && err.message) || err) });
      }
    }
  }, workerData.everyMs);
`;

interface Registered {
  count: number;
  /** Called if the worker cannot checkpoint this file: the handle checkpoints on its own again. */
  fallback: () => void;
  /** The WAL file's size and mtime when last looked at ('' before the first look). */
  seen: string;
}

/** The WAL's size and modification time: it changes with every commit (a checkpoint does not write the WAL). */
function walStamp(file: string): string {
  try {
    const st = statSync(`${file}-wal`, { bigint: true });
    return `${st.size}:${st.mtimeNs}`;
  } catch {
    return 'none';
  }
}

/**
 * Checkpoints the WAL of every database the process has open, from one worker thread with
 * its own connections. SQLite's automatic checkpoint runs inside the commit that crosses
 * 1 000 WAL pages, on the JavaScript thread: it copies pages into the database file and
 * fsyncs both (issue 24 measured 10-60 ms stalls during a prune, whatever the batch size).
 * The server's handles turn it off (wal_autocheckpoint=0) and register here; a PASSIVE
 * checkpoint every 200 ms never waits for the server's readers or writer and keeps the WAL
 * short. Should the worker fail, the handles go back to checkpointing themselves.
 *
 * The worker runs only while there is something to checkpoint: a worker thread is a V8
 * isolate and a Node environment of its own, ~15 MiB of RSS (issue 24, idle memory), for
 * a server that writes nothing most of the time. The main thread looks at each WAL file's
 * size and mtime every 200 ms (a stat); the worker starts at the first change and stops
 * when no WAL has changed for `idleStopMs` (its last checkpoints copied everything by then).
 */
class Checkpointer {
  private worker: Worker | null = null;
  /** A stopped worker until it has exited (its connections closed). */
  private retiring: Promise<void> | null = null;
  private readonly files = new Map<string, Registered>();
  private readonly acks = new Map<number, () => void>();
  private nextId = 0;
  private watch: NodeJS.Timeout | null = null;
  private lastChange = 0;
  /** How long the WAL files stay unchanged before the worker stops. */
  idleStopMs = IDLE_STOP_MS;

  /** True while the worker thread runs (tests). */
  get running(): boolean {
    return this.worker !== null;
  }

  register(file: string, fallback: () => void): void {
    const known = this.files.get(file);
    if (known) {
      known.count++;
      return;
    }
    this.files.set(file, { count: 1, fallback, seen: '' });
    this.worker?.postMessage({ type: 'open', file });
    this.watch ??= setInterval(() => this.look(), EVERY_MS).unref();
    this.look();
  }

  /** Resolves once the worker's connection to `file` is closed (a restore or a close may then change the file). */
  async unregister(file: string): Promise<void> {
    const known = this.files.get(file);
    if (!known) return;
    if (--known.count > 0) return;
    this.files.delete(file);
    if (this.files.size === 0 && this.watch) {
      clearInterval(this.watch);
      this.watch = null;
    }
    const worker = this.worker;
    const retiring = this.retiring;
    if (worker) {
      const id = this.nextId++;
      const closed = new Promise<void>((resolve) => this.acks.set(id, resolve));
      worker.ref(); // an answer is awaited: the process must live until it comes
      worker.postMessage({ type: 'close', file, id });
      await closed;
    }
    if (this.files.size === 0 && this.acks.size === 0) this.stopWorker(); // nothing left to checkpoint
    // A worker stopped a moment ago may still hold the file open.
    if (retiring) await retiring;
  }

  /** Starts the worker when a WAL changed; stops it when none changed for idleStopMs. */
  private look(): void {
    const now = Date.now();
    for (const [file, r] of this.files) {
      const stamp = walStamp(file);
      if (stamp !== r.seen) {
        // The first look counts as a change when the WAL has anything in it.
        if (r.seen !== '' || (stamp !== 'none' && !stamp.startsWith('0:'))) this.lastChange = now;
        r.seen = stamp;
      }
    }
    if (this.files.size === 0) return;
    if (!this.worker && now - this.lastChange < this.idleStopMs) this.startWorker();
    else if (this.worker && now - this.lastChange >= this.idleStopMs && this.acks.size === 0) this.stopWorker();
  }

  private startWorker(): void {
    const worker = new Worker(WORKER, { eval: true, workerData: { module: require.resolve('better-sqlite3'), everyMs: EVERY_MS } });
    worker.on('message', (m: { type: string; id?: number; file?: string }) => {
      if (m.type === 'closed' && m.id !== undefined) {
        this.acks.get(m.id)?.();
        this.acks.delete(m.id);
        if (this.acks.size === 0) worker.unref();
      } else if (m.type === 'failed' && m.file) {
        this.files.get(m.file)?.fallback();
      }
    });
    const gone = () => {
      if (this.worker !== worker) return;
      this.worker = null;
      for (const r of this.files.values()) r.fallback();
      this.files.clear();
      if (this.watch) clearInterval(this.watch);
      this.watch = null;
      for (const ack of this.acks.values()) ack();
      this.acks.clear();
    };
    worker.on('error', gone);
    worker.on('exit', gone);
    worker.unref(); // never what keeps the process alive (after the listeners: adding one refs it again)
    this.worker = worker;
    for (const file of this.files.keys()) worker.postMessage({ type: 'open', file });
  }

  private stopWorker(): void {
    const worker = this.worker;
    if (!worker) return;
    this.worker = null; // its exit is no failure: gone() ignores it
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    const retiring = Promise.all([this.retiring, exited]).then(() => undefined);
    this.retiring = retiring;
    void retiring.then(() => {
      if (this.retiring === retiring) this.retiring = null;
    });
    worker.postMessage({ type: 'stop' });
  }
}

/** The process's checkpointer (one worker thread for every database it opens). */
export const checkpointer = new Checkpointer();
