import path from 'node:path';
import t from 'tap';
import { openDatabase } from '../server/src/platform/db/database.js';
import { tempDataDir } from './helpers/harness.js';
import { startServerProcess } from './helpers/server-process.js';
import { cookieHeader } from './helpers/auth.js';

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
  const setup = await call('/api/v1/auth/setup', { method: 'POST', json: { email: 'o@example.test', password: 'correct horse battery staple', displayName: 'O' } });
  t.equal(setup.status, 201);
  const admin = { cookie: cookieHeader(setup as never), 'x-csrf-token': setup.body.data.csrfToken };
  const session = (await call('/api/v1/player/pairing-sessions', { method: 'POST', json: { playerFamily: 'edge' } })).body.data;
  await call(`/api/v1/screens/pairing/${session.id}/approve`, { method: 'POST', headers: admin, json: { name: 'Durable' } });
  const token = (await call(`/api/v1/player/pairing-sessions/${session.id}`, { headers: { 'x-pairing-secret': session.pollSecret } })).body.data.enrollmentToken;
  const { screenId, credential } = (await call('/api/v1/player/enroll', { method: 'POST', json: { enrollmentToken: token } })).body.data;

  const base = Math.floor(Date.now() / 10_000) * 10_000 - 24 * 3600_000;
  const accepted = new Set<string>();
  let batch = 0;
  let stop = false;
  const sender = async () => {
    while (!stop) {
      const b = batch++;
      const buckets = Array.from({ length: 60 }, (_, i) => ({
        startedAt: new Date(base + (b * 60 + i) * 10_000).toISOString(),
        averageLevel: 10,
        peakLevel: 20,
        monitoredMs: 10_000,
        warningMs: 0,
        loudMs: 0,
      }));
      try {
        const res = await fetch(server.url + '/api/v1/player/heartbeat', {
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
  };
  const senders = [sender(), sender(), sender()];
  while (accepted.size < 3000) await new Promise((r) => setTimeout(r, 20));
  server.child.kill('SIGKILL');
  const exit = await server.exited;
  t.equal(exit.signal, 'SIGKILL');
  stop = true;
  await Promise.all(senders);
  t.ok(accepted.size >= 3000, `${accepted.size} buckets acknowledged before the kill`);

  // Restart on the same data directory: migrations, WAL recovery.
  const again = await startServerProcess(t, dataDir);
  const res = await fetch(again.url + '/healthz');
  t.equal(res.status, 200);
  again.child.kill('SIGTERM');
  await again.exited;

  const db = openDatabase(path.join(dataDir, 'placard.db'));
  t.teardown(() => db.close());
  const rows = await db.db.selectFrom('noise_buckets').select('started_at').where('screen_id', '=', screenId).execute();
  const stored = new Set(rows.map((r) => r.started_at));
  const missing = [...accepted].filter((x) => !stored.has(x));
  t.same(missing, [], 'no acknowledged bucket was lost');
  t.equal(rows.length, stored.size, 'no duplicates');
});
