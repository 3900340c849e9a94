import { randomInt } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import { type Db, type OpenedDatabase, postgresUrlOf } from './db/database.js';

/**
 * The instances sharing one database (issue 25, docs/operations.md "Scaling out"). On
 * SQLite there is one process and this is all local: nothing to tell, every tick is ours.
 * On PostgreSQL each instance keeps one connection of its own that
 *
 * - holds a session advisory lock (class LIVENESS, key `this.key`) for as long as the
 *   process lives: PostgreSQL drops it when the process dies or loses its connection, so
 *   `isAlive(key)` is a question to the database, not a timeout of ours (the job queue asks
 *   it before running another instance's job again);
 * - LISTENs on one channel: `publish(topic, data)` is a NOTIFY the other instances receive
 *   (socket messages for players connected elsewhere, caches to drop). A notification is
 *   delivered once the statement that sent it commits; the senders here publish after their
 *   own transaction committed, so whoever receives one reads the change.
 *
 * `claimTick(name, everyMs)` is the periodic tasks' lease: a row per task says when it is
 * next due, and an instance runs a tick only when its conditional upsert moved that time on
 * (one statement: two instances cannot both win it).
 */
export type ClusterHandler = (data: unknown) => void;

const CHANNEL = 'placard_cluster';
/** pg_advisory_lock's first key for the instances' liveness locks ('plci'). */
const LIVENESS = 0x706c6369;
/** PostgreSQL refuses a NOTIFY payload of 8000 bytes or more. */
const MAX_PAYLOAD = 7_900;
const RECONNECT_MS = 1_000;

export class Cluster {
  /** This process among the instances (a random positive 31-bit number, as text where stored). */
  readonly key = randomInt(1, 2 ** 31 - 1);
  private readonly handlers = new Map<string, Set<ClusterHandler>>();
  private client: pg.Client | null = null;
  private stopped = false;
  private reconnecting: NodeJS.Timeout | null = null;
  private syncing: Promise<void> | null = null;
  private nextSync: Promise<void> | null = null;
  /** Notifications received from other instances (tests). */
  received = 0;

  /** `url`: PostgreSQL's (password included; never logged), or null for SQLite (a lone process). */
  constructor(
    private readonly db: Db,
    private readonly url: string | null,
    private readonly logger: Logger,
  ) {}

  /** True when other instances may share the database (PostgreSQL). */
  get shared(): boolean {
    return this.url !== null;
  }

  /** Connects the instance's own connection (PostgreSQL); a no-op on SQLite. */
  async start(): Promise<void> {
    if (!this.url || this.client) return;
    this.stopped = false;
    await this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.reconnecting) clearTimeout(this.reconnecting);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined); // its liveness lock goes with the session
  }

  /**
   * Runs `handler` with the data of every `topic` message another instance publishes (`T`:
   * what this code's own instances send under that topic; JSON, so check what you rely on).
   */
  on<T>(topic: string, handler: (data: T) => void): void {
    let set = this.handlers.get(topic);
    if (!set) this.handlers.set(topic, (set = new Set()));
    set.add(handler as ClusterHandler);
  }

  /**
   * Tells the other instances (nothing on SQLite). Resolves once the message is committed
   * (await it when what you do next must come after the others can hear it); never rejects:
   * a failure is logged.
   */
  publish(topic: string, data: unknown): Promise<void> {
    if (!this.url) return Promise.resolve();
    const payload = JSON.stringify({ from: this.key, topic, data });
    if (Buffer.byteLength(payload) > MAX_PAYLOAD) {
      this.logger.warn({ topic, bytes: Buffer.byteLength(payload) }, 'cluster message too large to send; split it');
      return Promise.resolve();
    }
    return sql`select pg_notify(${CHANNEL}, ${payload})`.execute(this.db).then(
      () => undefined,
      (err: unknown) => this.logger.warn({ err, topic }, 'could not tell the other instances'),
    );
  }

  /**
   * Resolves once the messages other instances committed before the call have been handled
   * here: one statement on this instance's listening connection, whose answer PostgreSQL
   * sends after the notifications already waiting for that session (they are delivered when
   * it is idle, and it was: the statement was not sent yet). Callers waiting at once share
   * the next statement. At once on SQLite or while reconnecting (a reconnect forgets
   * everything anyway: `cluster.resync`).
   */
  sync(): Promise<void> {
    const client = this.client;
    if (!client) return Promise.resolve();
    if (!this.syncing) {
      this.syncing = client.query('select 1').then(
        () => undefined,
        () => undefined,
      );
      // Callers arriving while it runs may have seen newer commits than it started after: the next one serves them.
      void this.syncing.then(() => {
        this.syncing = null;
      });
      return this.syncing;
    }
    this.nextSync ??= this.syncing.then(() => {
      this.nextSync = null;
      return this.sync();
    });
    return this.nextSync;
  }

  /** Whether the instance with `key` is running (SQLite: only this process is). */
  async isAlive(key: number): Promise<boolean> {
    if (!this.url) return key === this.key;
    if (key === this.key) return true;
    const r = await sql<{ n: number }>`
      select count(*) as n from pg_locks
      where locktype = 'advisory' and classid::bigint = ${LIVENESS} and objid::bigint = ${key} and objsubid = 2 and granted`.execute(this.db);
    return Number(r.rows[0]?.n ?? 0) > 0;
  }

  /**
   * Whether this instance runs this tick of the periodic task `name` (every `everyMs`): the
   * first instance whose tick finds the task due moves its due time on and runs it; the
   * others skip until then. A little slack (a tenth, at most a second) lets the winner's own
   * next tick, whose timer may fire a few ms early, win again. Always true on SQLite.
   */
  async claimTick(name: string, everyMs: number): Promise<boolean> {
    if (!this.url) return true;
    const next = Math.max(0, everyMs - Math.min(1_000, everyMs / 10));
    const r = await sql`
      with now as (select (extract(epoch from clock_timestamp()) * 1000)::bigint as ms)
      insert into periodic_claims (name, due_ms, claimed_by)
      select ${name}, now.ms + ${Math.round(next)}, ${String(this.key)} from now
      on conflict (name) do update set due_ms = excluded.due_ms, claimed_by = excluded.claimed_by
      where periodic_claims.due_ms <= (select ms from now)
      returning name`.execute(this.db);
    return r.rows.length > 0;
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url!, application_name: `placard instance ${this.key}` });
    client.on('notification', (msg) => this.receive(msg.payload));
    client.on('error', (err) => {
      this.logger.warn({ err }, 'the instance connection to PostgreSQL failed; reconnecting');
      this.lost(client);
    });
    client.on('end', () => this.lost(client));
    await client.connect();
    await client.query('select pg_advisory_lock($1, $2)', [LIVENESS, this.key]);
    await client.query(`listen ${CHANNEL}`);
    this.client = client;
  }

  private lost(client: pg.Client): void {
    if (this.stopped || this.client !== client) return;
    this.client = null;
    void client.end().catch(() => undefined);
    const retry = () => {
      this.reconnecting = null;
      if (this.stopped) return;
      this.connect().then(
        // Messages sent meanwhile are lost: whoever keeps state others change starts afresh.
        () => this.deliver('cluster.resync', null),
        () => {
          this.reconnecting = setTimeout(retry, RECONNECT_MS);
          this.reconnecting.unref();
        },
      );
    };
    this.reconnecting = setTimeout(retry, RECONNECT_MS);
    this.reconnecting.unref();
  }

  private receive(payload: string | undefined): void {
    let message: { from?: unknown; topic?: unknown; data?: unknown };
    try {
      message = JSON.parse(payload ?? '');
    } catch {
      return;
    }
    if (message.from === this.key || typeof message.topic !== 'string') return;
    this.received++;
    this.deliver(message.topic, message.data);
  }

  private deliver(topic: string, data: unknown): void {
    for (const handler of this.handlers.get(topic) ?? []) {
      try {
        handler(data);
      } catch (err) {
        this.logger.error({ err, topic }, 'a cluster message handler failed');
      }
    }
  }
}

/** The cluster of an opened database: shared on PostgreSQL (start() it), a lone process on SQLite. */
export function clusterOf(database: OpenedDatabase, logger: Logger): Cluster {
  return new Cluster(database.db, postgresUrlOf(database), logger);
}
