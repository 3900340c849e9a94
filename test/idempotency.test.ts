import { createHash } from 'node:crypto';
import t from 'tap';
import { z } from 'zod';
import { IDEMPOTENCY_TTL_MS, pruneIdempotencyKeys } from '../server/src/platform/http/idempotency.js';
import { buildRouter } from '../server/src/platform/http/router.js';
import { created, defineRoute } from '../server/src/platform/http/route.js';
import { signIn } from './helpers/auth.js';
import { contended, startApp, type TestApp } from './helpers/harness.js';

const FIELDS = [{ key: 'dish', label: 'Dish', type: 'text', required: true }];
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

async function formCount(app: TestApp): Promise<number> {
  const row = await app.deps.db
    .selectFrom('data_sources')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('provider', '=', 'manual-table')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

t.test('POST /forms with Idempotency-Key: a retry answers the first reply and makes nothing new', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const post = (json: unknown, key?: string, who = owner) =>
    app.json('/api/v1/forms', { method: 'POST', headers: { ...who.headers, ...(key === undefined ? {} : { 'idempotency-key': key }) }, json });

  const first = await post({ name: 'Specials', fields: FIELDS }, 'specials-1');
  t.equal(first.status, 201, JSON.stringify(first.body));
  t.equal(first.headers.get('idempotency-replayed'), null, 'the first answer is not a replay');
  const again = await post({ name: 'Specials', fields: FIELDS }, 'specials-1');
  t.equal(again.status, 201);
  t.equal(again.headers.get('idempotency-replayed'), 'true');
  t.same(again.body, first.body, 'the same reply, the same form id');
  t.equal(again.headers.get('etag'), first.headers.get('etag'), 'the stored ETag is answered again');
  t.equal(await formCount(app), 1, 'one form, not two');

  // The draft's quoted form of the same key is the same key.
  const quoted = await post({ name: 'Specials', fields: FIELDS }, '"specials-1"');
  t.equal(quoted.headers.get('idempotency-replayed'), 'true');
  t.equal(await formCount(app), 1);

  // Same key, another body: refused, nothing made.
  const other = await post({ name: 'Specials 2', fields: FIELDS }, 'specials-1');
  t.equal(other.status, 422);
  t.equal(other.body.error.code, 'idempotency_key_reused');
  t.equal(await formCount(app), 1);

  // Without a key every POST makes a form.
  t.equal((await post({ name: 'Rooms', fields: FIELDS })).status, 201);
  t.equal((await post({ name: 'Rooms 2', fields: FIELDS })).status, 201);
  t.equal(await formCount(app), 3);

  // Malformed keys: 400 naming the header, nothing made.
  for (const bad of ['has space', 'x'.repeat(256), 'é-key', '"unterminated', '""']) {
    const res = await post({ name: 'Bad key', fields: FIELDS }, bad);
    t.equal(res.status, 400, `bad key ${JSON.stringify(bad.slice(0, 20))}`);
    t.equal(res.body.error.code, 'validation_failed');
    t.same(res.body.error.details.issues[0].path, ['Idempotency-Key']);
  }
  t.equal((await post({ name: 'Longest key', fields: FIELDS }, 'k'.repeat(255))).status, 201, '255 characters is fine');
  t.equal(await formCount(app), 4);

  // Another user's identical key and body is their own request.
  const editor = await signIn(app, { role: 'editor' });
  const theirs = await post({ name: 'Specials', fields: FIELDS }, 'specials-1', editor);
  t.equal(theirs.status, 201);
  t.equal(theirs.headers.get('idempotency-replayed'), null);
  t.not(theirs.body.data.sourceId ?? theirs.body.data.id, first.body.data.sourceId ?? first.body.data.id);
  t.equal(await formCount(app), 5);

  // An invalid body is not kept: the key stays free for the corrected request.
  const invalid = await post({ name: '', fields: FIELDS }, 'fix-me');
  t.equal(invalid.status, 400);
  const fixed = await post({ name: 'Fixed', fields: FIELDS }, 'fix-me');
  t.equal(fixed.status, 201, 'the key was not taken by the refused request');
  t.equal(fixed.headers.get('idempotency-replayed'), null);
});

t.test('Idempotency-Key: a request still running answers 409; an abandoned claim is taken over', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const body = { name: 'Specials', fields: FIELDS };
  const pending = (createdAt: string) =>
    app.deps.db
      .insertInto('idempotency_keys')
      .values({
        principal: `user:${owner.user.id}`,
        key: 'k1',
        method: 'POST',
        path: '/api/v1/forms',
        request_sha256: sha256(JSON.stringify(body)),
        status: null,
        body: null,
        created_at: createdAt,
      })
      .execute();
  await pending(new Date().toISOString());
  const post = () => app.json('/api/v1/forms', { method: 'POST', headers: { ...owner.headers, 'idempotency-key': 'k1' }, json: body });
  const busy = await post();
  t.equal(busy.status, 409);
  t.equal(busy.body.error.code, 'conflict');
  t.equal(await formCount(app), 0, 'the handler did not run');

  await app.deps.db.deleteFrom('idempotency_keys').execute();
  await pending(new Date(Date.now() - 11 * 60_000).toISOString());
  const taken = await post();
  t.equal(taken.status, 201, 'a claim left by a request that never finished (a crash) does not lock the key');
  t.equal(await formCount(app), 1);
});

t.test('Idempotency-Key: concurrent retries make one form', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const post = () =>
    app.json('/api/v1/forms', { method: 'POST', headers: { ...owner.headers, 'idempotency-key': 'race' }, json: { name: 'Race', fields: FIELDS } });
  const answers = await contended(app, () => [post(), post(), post()]);
  const statuses = answers.map((a) => a.status).sort();
  t.equal(answers.filter((a) => a.status === 201 && !a.headers.get('idempotency-replayed')).length, 1, `exactly one ran (${statuses})`);
  for (const a of answers) t.ok(a.status === 201 || (a.status === 409 && a.body.error.code === 'conflict'), `${a.status} is a replay or in progress`);
  t.equal(await formCount(app), 1);
});

t.test('Idempotency-Key: keys expire after 24 hours (the hourly prune, and on reuse)', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const post = (key: string) =>
    app.json('/api/v1/forms', { method: 'POST', headers: { ...owner.headers, 'idempotency-key': key }, json: { name: `T ${key}`, fields: FIELDS } });
  t.equal((await post('old')).status, 201);
  t.equal((await post('new')).status, 201);
  const dayAgo = new Date(Date.now() - IDEMPOTENCY_TTL_MS - 1000).toISOString();
  await app.deps.db.updateTable('idempotency_keys').set({ created_at: dayAgo }).where('key', '=', 'old').execute();
  await app.deps.periodic.runNow('auth-throttle.prune');
  const left = await app.deps.db.selectFrom('idempotency_keys').select('key').execute();
  t.same(
    left.map((r) => r.key),
    ['new'],
    'the periodic prune removed the expired key only',
  );
  t.equal(await pruneIdempotencyKeys(app.deps.db), 0, 'nothing more to prune');

  // An expired key not yet pruned is not replayed: the request runs again.
  await app.deps.db.updateTable('idempotency_keys').set({ created_at: dayAgo }).where('key', '=', 'new').execute();
  const again = await post('new');
  t.equal(again.status, 201);
  t.equal(again.headers.get('idempotency-replayed'), null);
  t.equal(await formCount(app), 3);
});

t.test('Idempotency-Key: a failing handler frees the key; statuses are declared; only POST/PATCH routes', async (t) => {
  let fail = true;
  let runs = 0;
  const flaky = defineRoute({
    method: 'POST',
    path: '/api/v1/test-idempotent',
    auth: 'session',
    summary: 'test',
    tags: ['test'],
    body: z.object({ n: z.number() }),
    idempotent: true,
    responses: { 201: { description: 'made', data: z.object({ run: z.number() }), headers: { Location: { description: 'where' } } } },
    handler: () => {
      runs++;
      if (fail) throw new Error('boom');
      return created({ run: runs }, { Location: `/things/${runs}` });
    },
  });
  const app = await startApp(t, { extraRoutes: [flaky] });
  const owner = await signIn(app);
  const post = () => app.json('/api/v1/test-idempotent', { method: 'POST', headers: { ...owner.headers, 'idempotency-key': 'f' }, json: { n: 1 } });
  t.equal((await post()).status, 500);
  fail = false;
  const ok = await post();
  t.equal(ok.status, 201, 'the failure was not kept: the retry ran');
  t.same(ok.body.data, { run: 2 });
  const replay = await post();
  t.same(replay.body.data, { run: 2 });
  t.equal(replay.headers.get('location'), '/things/2', 'Location is answered again');
  t.equal(runs, 2, 'the replay did not run the handler');

  t.throws(() => buildRouter([{ ...flaky, method: 'PUT' }], { jsonLimitBytes: 1000, validateResponses: true, authenticators: () => ({}) }), /POST and PATCH/);
  t.throws(() => buildRouter([{ ...flaky, auth: 'public' }], { jsonLimitBytes: 1000, validateResponses: true, authenticators: () => ({}) }), /POST and PATCH/);
});

t.test('the OpenAPI document lists Idempotency-Key and what it adds on POST /forms', async (t) => {
  const app = await startApp(t);
  const doc = (await app.json('/api/v1/openapi.json')).body;
  const op = doc.paths['/api/v1/forms'].post;
  t.ok(
    op.parameters.some((p: { in: string; name: string }) => p.in === 'header' && p.name === 'idempotency-key'),
    'the header is a parameter',
  );
  t.ok(op.responses['422'], '422 declared');
  t.same(op.responses['422']['x-placard-error-codes'], ['idempotency_key_reused']);
  t.ok(op.responses['409']['x-placard-error-codes'].includes('conflict'), '409 conflict declared');
  t.ok(op.responses['201'].headers['Idempotency-Replayed'], 'the replay header is documented');
  t.notOk(
    doc.paths['/api/v1/forms'].get.parameters?.some((p: { name: string }) => p.name === 'idempotency-key'),
    'not on GET',
  );
});
