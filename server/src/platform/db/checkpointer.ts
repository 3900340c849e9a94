import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

const require = createRequire(import.meta.url);

/** How often the worker checkpoints each database (a PASSIVE checkpoint with nothing new to copy costs microseconds). */
const EVERY_MS = 200;

const WORKER = `
  const { parentPort, workerData } = require('node:worker_threads');
  const Database = require(workerData.module);
  const dbs = new Map();
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
}

/**
 * Checkpoints the WAL of every database the process has open, from one worker thread with
 * its own connections. SQLite's automatic checkpoint runs inside the commit that crosses
 * 1 000 WAL pages, on the JavaScript thread: it copies pages into the database file and
 * fsyncs both (issue 24 measured 10-60 ms stalls during a prune, whatever the batch size).
 * The server's handles turn it off (wal_autocheckpoint=0) and register here; a PASSIVE
 * checkpoint every 200 ms never waits for the server's readers or writer and keeps the WAL
 * short. Should the worker fail, the handles go back to checkpointing themselves.
 */
class Checkpointer {
  private worker: Worker | null = null;
  private readonly files = new Map<string, Registered>();
  private readonly acks = new Map<number, () => void>();
  private nextId = 0;

  register(file: string, fallback: () => void): void {
    const known = this.files.get(file);
    if (known) {
      known.count++;
      return;
    }
    this.files.set(file, { count: 1, fallback });
    this.ensureWorker().postMessage({ type: 'open', file });
  }

  /** Resolves once the worker's connection to `file` is closed (a restore or a close may then change the file). */
  unregister(file: string): Promise<void> {
    const known = this.files.get(file);
    if (!known) return Promise.resolve();
    if (--known.count > 0) return Promise.resolve();
    this.files.delete(file);
    const worker = this.worker;
    if (!worker) return Promise.resolve();
    const id = this.nextId++;
    const closed = new Promise<void>((resolve) => this.acks.set(id, resolve));
    worker.ref(); // an answer is awaited: the process must live until it comes
    worker.postMessage({ type: 'close', file, id });
    return closed;
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
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
      for (const ack of this.acks.values()) ack();
      this.acks.clear();
    };
    worker.on('error', gone);
    worker.on('exit', gone);
    worker.unref(); // never what keeps the process alive (after the listeners: adding one refs it again)
    this.worker = worker;
    return worker;
  }
}

/** The process's checkpointer (one worker thread for every database it opens). */
export const checkpointer = new Checkpointer();
