import t from 'tap';
import { addDataChangeHook, type DataChange } from '../server/src/modules/data-sources/index.js';
import { effectiveInterval, nextDelaySec, REFRESH_CONCURRENCY } from '../server/src/modules/data-sources/refresh.js';
import { type SignedIn, signIn } from './helpers/auth.js';
import { createSource, diagnosticsOf, fakeFeed, jsonDoc, refreshNow } from './helpers/data-sources.js';
import { startApp, type TestApp } from './helpers/harness.js';

const doc = (...names: string[]) => ({ items: names.map((name, i) => ({ name, price: i + 1 })) });

async function jsonSource(app: TestApp, who: SignedIn, url: string, extra: Record<string, unknown> = {}) {
  const made = await createSource(app, who, { name: `Feed ${url}`, provider: 'json', config: { url, rowsPath: '$.items[*]', ...extra } });
  if (made.status !== 201) throw new Error(`create answered ${made.status}: ${JSON.stringify(made.body)}`);
  return made.body.data as { id: string };
}

const get = async (app: TestApp, who: SignedIn, id: string) => (await app.json(`/api/v1/data-sources/${id}`, { headers: who.headers })).body.data;

t.test('backoff and jitter: the interval after a success, doubling from the minimum after failures, never past the maximum', async (t) => {
  const bounds = { minSec: 60, defaultSec: 300, maxSec: 86_400 };
  t.equal(
    nextDelaySec(bounds, 300, 0, () => 0),
    300,
  );
  t.equal(
    nextDelaySec(bounds, 300, 0, () => 1),
    330,
    'up to 10% later',
  );
  t.equal(
    nextDelaySec(bounds, 300, 1, () => 0),
    60,
    'the first retry after the provider’s minimum',
  );
  t.equal(
    nextDelaySec(bounds, 300, 2, () => 0),
    120,
  );
  t.equal(
    nextDelaySec(bounds, 300, 5, () => 0),
    960,
  );
  t.equal(
    nextDelaySec(bounds, 300, 20, () => 1),
    86_400,
    'capped at the maximum, jitter included',
  );
  t.equal(
    nextDelaySec(bounds, 300, 10_000, () => 0.5),
    86_400,
    'no overflow after very many failures',
  );
  t.equal(effectiveInterval(bounds, null), 300);
  t.equal(effectiveInterval(bounds, 5), 60);
  t.equal(effectiveInterval(bounds, 10 ** 9), 86_400);
});

t.test('conditional GET: a 304 or the same body writes only the attempt; new data makes a new revision and tells the hooks', async (t) => {
  const app = await startApp(t, { config: { fetchAllowLoopback: true } });
  const owner = await signIn(app);
  let current = doc('Latte', 'Tea');
  let etag: string | undefined = '"v1"';
  const feed = await fakeFeed(t, { '/menu.json': (q, s) => jsonDoc(current, etag)(q, s) });
  const changes: DataChange[] = [];
  addDataChangeHook(app.deps, (_deps, change) => {
    changes.push(change);
  });
  const src = await jsonSource(app, owner, `${feed.url}/menu.json`);
  await refreshNow(app, src.id);
  t.equal(feed.requests[0]?.headers['if-none-match'], undefined, 'the first fetch is unconditional');
  const first = await get(app, owner, src.id);
  t.equal(first.rowCount, 2);
  t.equal(first.snapshot.revision, 1);
  t.same(changes, [{ sourceId: src.id, change: 'data', revision: 1 }]);

  await refreshNow(app, src.id);
  t.equal(feed.requests[1]?.headers['if-none-match'], '"v1"', 'then with the ETag');
  let diag = await diagnosticsOf(app, owner, src.id);
  t.match(diag.attempts[0], { outcome: 'unchanged', status: 304, error: null });
  const after304 = await get(app, owner, src.id);
  t.equal(after304.snapshot.revision, 1, 'a 304 makes no new revision');
  t.equal(after304.snapshot.fetchedAt, first.snapshot.fetchedAt, 'nor touches the snapshot');
  t.equal(after304.revision, first.revision, 'nor the source');
  t.not(after304.state.lastSuccessAt, first.state.lastSuccessAt, 'it counts as a success');

  etag = undefined; // a server without ETags: the body's sha256 decides
  await refreshNow(app, src.id);
  diag = await diagnosticsOf(app, owner, src.id);
  t.match(diag.attempts[0], { outcome: 'unchanged', status: 200 });
  t.equal((await get(app, owner, src.id)).snapshot.revision, 1, 'the same body makes no new revision');

  current = doc('Latte', 'Tea', 'Mocha');
  await refreshNow(app, src.id);
  const changed = await get(app, owner, src.id);
  t.equal(changed.snapshot.revision, 2);
  t.equal(changed.rowCount, 3);
  t.same(
    changes.map((c) => c.revision),
    [1, 2],
    'the hooks heard of each new revision, and only of those',
  );
  const rows = await app.deps.db.selectFrom('data_source_attempts').select('outcome').where('source_id', '=', src.id).orderBy('id').execute();
  t.same(
    rows.map((r) => r.outcome),
    ['data', 'unchanged', 'unchanged', 'data'],
  );
});

t.test('a failing feed keeps the last data; diagnostics say stale and why; retries back off; recovery clears it', async (t) => {
  const app = await startApp(t, { config: { fetchAllowLoopback: true } });
  const owner = await signIn(app);
  let mode: 'ok' | 'down' | 'garbage' = 'ok';
  const feed = await fakeFeed(t, {
    '/menu.json': (q, s) => {
      if (mode === 'down') return s.writeHead(500).end('oops');
      if (mode === 'garbage') return s.writeHead(200, { 'content-type': 'application/json' }).end('<html>maintenance</html>');
      jsonDoc(doc('Latte', 'Tea'))(q, s);
    },
  });
  const src = await jsonSource(app, owner, `${feed.url}/menu.json`);
  await refreshNow(app, src.id);
  const good = await get(app, owner, src.id);
  t.equal(good.rowCount, 2);

  mode = 'down';
  let before = Date.now();
  await refreshNow(app, src.id);
  let now = await get(app, owner, src.id);
  t.equal(now.rowCount, 2, 'the rows stay');
  t.equal(now.snapshot.revision, 1);
  t.equal(now.state.stale, true);
  t.match(now.state.error, /HTTP 500/);
  let diag = await diagnosticsOf(app, owner, src.id);
  t.equal(diag.stale, true);
  t.match(diag.staleReason, /The last fetch failed \(The server answered HTTP 500\); data from .* is shown/);
  t.equal(diag.consecutiveFailures, 1);
  t.match(diag.attempts[0], { outcome: 'failed', status: 500, errorCode: 'http_status' });
  t.equal(diag.snapshot.rowCount, 2);
  let wait = Date.parse(diag.nextRunAt) - before;
  t.ok(wait >= 59_000 && wait <= 67_000, `first retry after about a minute (${wait} ms)`);

  mode = 'garbage';
  before = Date.now();
  await refreshNow(app, src.id);
  diag = await diagnosticsOf(app, owner, src.id);
  t.equal(diag.consecutiveFailures, 2);
  t.match(diag.attempts[0], { outcome: 'failed', errorCode: 'parse_failed', error: /could not be read/ });
  t.match(diag.staleReason, /The last 2 fetches failed/);
  wait = Date.parse(diag.nextRunAt) - before;
  t.ok(wait >= 119_000 && wait <= 133_000, `then after about two (${wait} ms)`);
  t.equal((await get(app, owner, src.id)).rowCount, 2, 'still the last good rows');

  mode = 'ok';
  await refreshNow(app, src.id);
  now = await get(app, owner, src.id);
  t.equal(now.state.stale, false);
  t.equal(now.state.error, null);
  diag = await diagnosticsOf(app, owner, src.id);
  t.equal(diag.consecutiveFailures, 0);
  t.equal(diag.staleReason, null);
  t.same(
    diag.attempts.map((a: any) => a.outcome),
    ['unchanged', 'failed', 'failed', 'data'],
    'newest first',
  );
  t.ok(diag.snapshot.ageSec <= 5, 'the data was just confirmed');

  // A source that never fetched anything says so.
  mode = 'down';
  const fresh = await jsonSource(app, owner, `${feed.url}/menu.json`, { maxRows: 5 });
  await refreshNow(app, fresh.id);
  const empty = await diagnosticsOf(app, owner, fresh.id);
  t.equal(empty.snapshot, null);
  t.match(empty.staleReason, /there is no data yet/);
});

t.test('limits: a slow feed times out, a 50 MB answer is cut, a redirect to a refused address is refused, loopback only when allowed', async (t) => {
  const app = await startApp(t, { config: { fetchAllowLoopback: true, dataSourceTimeoutMs: 3000 } });
  const owner = await signIn(app);
  const feed = await fakeFeed(t, {
    '/slow.json': () => {},
    '/huge.json': (_q, s) => {
      s.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(1024 * 1024, 0x20);
      let sent = 0;
      const pump = () => {
        while (sent < 50 && s.write(chunk)) sent++;
        if (sent >= 50) s.end();
        else s.once('drain', () => (sent++, pump()));
      };
      s.on('error', () => {});
      pump();
    },
    '/hop.json': (_q, s) => s.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end(),
  });
  const slow = await jsonSource(app, owner, `${feed.url}/slow.json`);
  const huge = await jsonSource(app, owner, `${feed.url}/huge.json`);
  const hop = await jsonSource(app, owner, `${feed.url}/hop.json`);
  const started = Date.now();
  await refreshNow(app, slow.id, huge.id, hop.id);
  t.ok(Date.now() - started < 10_000, 'the tick did not wait for the slow feed');
  const slowDiag = await diagnosticsOf(app, owner, slow.id);
  t.match(slowDiag.attempts[0], { outcome: 'failed', status: null, errorCode: 'timeout', error: /No answer within 3000 ms/ });
  t.ok(slowDiag.attempts[0].latencyMs < 6000, 'given up after the time limit');
  const hugeDiag = await diagnosticsOf(app, owner, huge.id);
  t.match(hugeDiag.attempts[0], { outcome: 'failed', errorCode: 'too_large', error: /larger than 10 MB/ });
  t.ok(hugeDiag.attempts[0].bytes <= 10 * 1024 * 1024 + 1, `reading stopped at the cap (${hugeDiag.attempts[0].bytes} bytes)`);
  t.equal(hugeDiag.snapshot, null);
  const hopDiag = await diagnosticsOf(app, owner, hop.id);
  t.match(hopDiag.attempts[0], { outcome: 'failed', errorCode: 'address_not_allowed', error: /metadata/ });
  t.equal(feed.requests.filter((r) => r.path === '/hop.json').length, 1);

  // The server's default: loopback is refused.
  const strict = await startApp(t);
  const admin = await signIn(strict);
  const local = await jsonSource(strict, admin, `${feed.url}/slow.json`);
  await refreshNow(strict, local.id);
  t.match((await diagnosticsOf(strict, admin, local.id)).attempts[0], { errorCode: 'address_not_allowed', error: /loopback/ });
  const preview = await strict.json('/api/v1/data-sources/json/preview', {
    method: 'POST',
    headers: admin.headers,
    json: { config: { url: `${feed.url}/hop.json` } },
  });
  t.match(preview.body.data.error, { code: 'address_not_allowed' }, 'preview is guarded the same way');
});

t.test('the scheduler: only due sources, a few at once, bounded attempts, a change mid-fetch drops the stale result', async (t) => {
  const app = await startApp(t, { config: { fetchAllowLoopback: true } });
  const owner = await signIn(app);
  let inFlight = 0;
  let most = 0;
  let delayMs = 300;
  const feed = await fakeFeed(t, {
    '/menu.json': (q, s) => {
      inFlight++;
      most = Math.max(most, inFlight);
      setTimeout(() => {
        inFlight--;
        jsonDoc(doc('Latte'))(q, s);
      }, delayMs);
    },
  });
  const sources = [];
  for (let i = 0; i < 8; i++) sources.push(await jsonSource(app, owner, `${feed.url}/menu.json`));
  await app.deps.periodic.runNow('data-sources.refresh');
  t.equal(feed.requests.length, 8, 'every due source was fetched');
  t.ok(most >= 2 && most <= REFRESH_CONCURRENCY && REFRESH_CONCURRENCY <= 4, `${most} at once at most (limit ${REFRESH_CONCURRENCY})`);
  for (const s of sources) t.equal((await get(app, owner, s.id)).rowCount, 1);
  await app.deps.periodic.runNow('data-sources.refresh');
  t.equal(feed.requests.length, 8, 'nothing is due right after');

  // Attempts are bounded per source.
  delayMs = 0;
  const [first] = sources;
  for (let i = 0; i < 24; i++) await refreshNow(app, first!.id);
  t.equal((await diagnosticsOf(app, owner, first!.id)).attempts.length, 20);
  const stored = await app.deps.db
    .selectFrom('data_source_attempts')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('source_id', '=', first!.id)
    .executeTakeFirstOrThrow();
  t.equal(Number(stored.n), 20, 'the database keeps the last 20');

  // A change while a fetch is under way: its result is dropped, and the new config is fetched next.
  delayMs = 400;
  const moving = await jsonSource(app, owner, `${feed.url}/menu.json`);
  const run = app.deps.periodic.runNow('data-sources.refresh');
  await new Promise((r) => setTimeout(r, 100));
  const patched = await app.json(`/api/v1/data-sources/${moving.id}`, {
    method: 'PATCH',
    headers: owner.headers,
    json: { config: { url: `${feed.url}/menu.json`, rowsPath: '$.items' } },
  });
  t.equal(patched.status, 200);
  await run;
  const dropped = await get(app, owner, moving.id);
  t.equal(dropped.snapshot, null, 'the result of the old config was not kept');
  t.ok(Date.parse(dropped.state.nextFetchAt) <= Date.now(), 'the new config is due at once');
  await app.deps.periodic.runNow('data-sources.refresh');
  t.equal((await get(app, owner, moving.id)).rowCount, 1);

  // The interval: within the provider's bounds.
  const tooFast = await app.json(`/api/v1/data-sources/${moving.id}`, { method: 'PATCH', headers: owner.headers, json: { refreshIntervalSec: 10 } });
  t.equal(tooFast.status, 400);
  t.match(tooFast.body.error.message, /between 60 and 86400/);
  const hourly = await app.json(`/api/v1/data-sources/${moving.id}`, { method: 'PATCH', headers: owner.headers, json: { refreshIntervalSec: 3600 } });
  t.equal(hourly.body.data.refreshIntervalSec, 3600);
  const next = Date.parse(hourly.body.data.state.nextFetchAt) - Date.now();
  t.ok(next > 3_500_000 && next <= 3_600_000, `the next fetch moved to an hour after the last (${next} ms)`);
});

t.test('stale without a failure: nothing succeeded for three intervals although the source should have refreshed', async (t) => {
  const app = await startApp(t, { config: { fetchAllowLoopback: true } });
  const owner = await signIn(app);
  const feed = await fakeFeed(t, { '/menu.json': jsonDoc(doc('Latte')) });
  const src = await jsonSource(app, owner, `${feed.url}/menu.json`, {});
  await refreshNow(app, src.id);
  t.equal((await diagnosticsOf(app, owner, src.id)).stale, false);
  // The refresh stopped running two hours ago (a source that refreshes every 5 minutes).
  const twoHoursAgo = new Date(Date.now() - 2 * 3_600_000).toISOString();
  await app.deps.db.updateTable('data_source_fetch_state').set({ last_success_at: twoHoursAgo }).where('source_id', '=', src.id).execute();
  const diag = await diagnosticsOf(app, owner, src.id);
  t.equal(diag.stale, true);
  t.match(diag.staleReason, /No fetch succeeded since .* although the source refreshes every 300 s/);
  t.ok(diag.snapshot.ageSec >= 7200, 'the data’s age counts from the last success');
  t.equal((await get(app, owner, src.id)).state.stale, true);
});
