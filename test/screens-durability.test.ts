import path from 'node:path';
import t from 'tap';
import { openDatabase } from '../server/src/platform/db/database.js';
import { tempDataDir } from './helpers/harness.js';
import { startServerProcess } from './helpers/server-process.js';
import { cookieHeader } from './helpers/auth.js';
import { noiseBuckets } from './helpers/noise.js';

/**
 * kill -9 while heartbeats stream in: every bucket the server answered `accepted` for
 * is in the database after a restart (synchronous=FULL, commit before the reply).
 */
t.test('a process ingesting heartbeats is killed -9; every accepted bucket survives', async (t) => {
  const dataDir = tempDataDir(t);
  const server = await startServerProcess(t, dataDir, { PLACARD_LOG_LEVEL: 'info' });
  const call = async (p: string, init: { method?: string; headers?: Record<string, string>; json?: unknown } = {}) => {
    const res = await fetch(server.url + p, {
      method: init.method ?? 'GET',
      headers: { ...(init.json !== undefined ? { 'content-type': 'application/json' } : {}), ...init.headers },
      ...(init.json !== undefined ? { body: JSON.stringify(init.json) } : {}),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
  };
  const setup = await call('/api/v1/auth/setup', {
    method: 'POST',
    json: { email: 'o@example.test', password: 'correct horse battery staple', displayName: 'O' },
  });
  t.equal(setup.status, 201);
  const admin = { cookie: cookieHeader(setup as never), 'x-csrf-token': setup.body.data.csrfToken };
  const session = (await call('/api/v1/player/pairing-sessions', { method: 'POST', json: { playerFamily: 'edge' } })).body.data;
  await call(`/api/v1/screens/pairing/${session.id}/approve`, { method: 'POST', headers: admin, json: { name: 'Durable' } });
  const token = (await call(`/api/v1/player/pairing-sessions/${session.id}`, { headers: { 'x-pairing-secret': session.pollSecret } })).body.data
    .enrollmentToken;
  const { screenId, credential } = (await call('/api/v1/player/enroll', { method: 'POST', json: { enrollmentToken: token } })).body.data;

  const base = Math.floor(Date.now() / 10_000) * 10_000 - 24 * 3600_000;
  /** Every bucket sent, by startedAt: the values the server must have stored for it, if it stored it. */
  type Values = [number, number, number, number, number, number | null];
  const sent = new Map<string, Values>();
  const accepted = new Set<string>();
  let batch = 0;
  let stop = false;
  let running = 0;
  const sender = async () => {
    running++;
    try {
      while (!stop) {
        const b = batch++;
        const buckets = Array.from({ length: 60 }, (_, i) => {
          const n = b * 60 + i;
          // Values differ from bucket to bucket, so a bucket stored with another's values shows.
          const bucket = {
            startedAt: new Date(base + n * 10_000).toISOString(),
            averageLevel: (n % 1000) / 10,
            peakLevel: (n * 7) % 101,
            monitoredMs: n % 10_001,
            warningMs: (n * 3) % 10_001,
            loudMs: (n * 11) % 10_001,
            ...(n % 5 === 0 ? {} : { triggerCount: n % 1001 }),
          };
          sent.set(bucket.startedAt, [bucket.averageLevel, bucket.peakLevel, bucket.monitoredMs, bucket.warningMs, bucket.loudMs, bucket.triggerCount ?? null]);
          return bucket;
        });
        try {
          const res = await fetch(`${server.url}/api/v1/player/heartbeat`, {
            method: 'POST',
            headers: { authorization: `Bearer ${credential}`, 'content-type': 'application/json' },
            body: JSON.stringify({ noiseMeter: { status: 'normal', pendingHistory: buckets } }),
          });
          const body = (await res.json()) as { data?: { noiseHistory?: { accepted?: number } } };
          if (res.status === 200 && body.data?.noiseHistory?.accepted === buckets.length) for (const x of buckets) accepted.add(x.startedAt);
        } catch {
          return; // the server died mid-request: that batch was never acknowledged
        }
      }
    } finally {
      running--;
    }
  };
  const senders = [sender(), sender(), sender()];
  // Wait for 3000 acknowledged buckets, but not forever: a server that stopped answering
  // (or senders that all died) is a failure of its own, reported as such.
  const deadline = Date.now() + 120_000;
  while (accepted.size < 3000 && running > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  if (accepted.size < 3000) {
    t.fail(`only ${accepted.size} of 3000 buckets acknowledged ${running > 0 ? 'within 120 s' : 'before every sender stopped (the server failed requests)'}`);
    stop = true;
    server.child.kill('SIGKILL');
    await Promise.all(senders);
    return;
  }
  server.child.kill('SIGKILL');
  const exit = await server.exited;
  t.equal(exit.signal, 'SIGKILL');
  stop = true;
  await Promise.all(senders);
  t.ok(accepted.size >= 3000, `${accepted.size} buckets acknowledged before the kill`);

  // Restart on the same data directory: migrations, WAL recovery.
  const again = await startServerProcess(t, dataDir);
  const res = await fetch(`${again.url}/healthz`);
  t.equal(res.status, 200);
  again.child.kill('SIGTERM');
  await again.exited;

  const db = openDatabase(path.join(dataDir, 'placard.db'));
  t.teardown(() => db.close());
  const rows = await noiseBuckets(db.db, screenId);
  const stored = new Map(rows.map((r) => [r.started_at, [r.average_level, r.peak_level, r.monitored_ms, r.warning_ms, r.loud_ms, r.trigger_count] as Values]));
  const missing = [...accepted].filter((x) => !stored.has(x));
  t.same(missing, [], 'no acknowledged bucket was lost');
  // Every stored bucket (acknowledged or committed just before the kill) holds the values
  // sent for its startedAt: nothing torn, shifted or taken from another bucket.
  const wrong = rows.filter((r) => {
    const want = sent.get(r.started_at);
    return !want || JSON.stringify(want) !== JSON.stringify(stored.get(r.started_at));
  });
  t.same(
    wrong.slice(0, 5).map((r) => ({ startedAt: r.started_at, stored: stored.get(r.started_at), sent: sent.get(r.started_at) ?? null })),
    [],
    `every stored bucket has the values sent (${rows.length} rows checked)`,
  );
  t.ok(rows.length >= accepted.size && rows.length <= sent.size, `${rows.length} rows: at least the acknowledged, at most the sent`);
});
