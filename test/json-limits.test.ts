import { sql } from 'kysely';
import t, { type Test } from 'tap';
import { migrate, openDatabase } from '../server/src/platform/db/database.js';
import { storableJson } from '../server/src/platform/db/json.js';
import { MIGRATIONS } from '../server/src/platform/db/migrations/index.js';
import { ApiError } from '../server/src/platform/http/errors.js';
import { checkJsonValue, MAX_JSON_DEPTH, MAX_JSON_ENTRIES, scanJsonText } from '../server/src/platform/json-limits.js';
import { signedInApp } from './helpers/auth.js';
import { tempDataDir, type TestApp } from './helpers/harness.js';
import { pairScreen, type PairedScreen } from './helpers/screens.js';

/**
 * Issue 15, "one heartbeat can poison its screen for good": every JSON body is bounded at
 * the parser (depth MAX_JSON_DEPTH, MAX_JSON_ENTRIES members and elements, no `__proto__`),
 * and nothing the database's JSON functions cannot read is stored.
 */

/** JSON text of `levels` nested objects around `inner` ({"x":{"x":...}}), built as text so no stack is used. */
const nestedText = (levels: number, inner = '1') => `${'{"x":'.repeat(levels)}${inner}${'}'.repeat(levels)}`;
/** A body whose extra field makes the whole body `depth` deep (the body object is level 1). */
const heartbeatText = (depth: number) => `{"playerVersion":"1.0.0","extra":${nestedText(depth - 1)}}`;

async function setup(t: Test) {
  const { app, owner } = await signedInApp(t);
  const screen = await pairScreen(app, owner);
  return { app, owner, screen };
}

const post = (app: TestApp, path: string, headers: Record<string, string>, text: string) =>
  app.fetch(path, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: text });

async function errorOf(res: Response): Promise<{ status: number; code: string; message: string; details: any }> {
  const body = (await res.json()) as { error: { code: string; message: string; details?: unknown } };
  return { status: res.status, code: body.error.code, message: body.error.message, details: body.error.details };
}

/** Everything a screen needs to keep working: heartbeat, manifest, assignment read, schedule preview. */
async function screenWorks(t: Test, app: TestApp, owner: { headers: Record<string, string> }, screen: PairedScreen, label: string) {
  const beat = await app.json('/api/v1/player/heartbeat', {
    method: 'POST',
    headers: screen.headers,
    json: { playerVersion: '1.0.1', display: { width: 1920, height: 1080 } },
  });
  t.equal(beat.status, 200, `${label}: heartbeat`);
  const manifest = await app.fetch('/api/v1/player/manifest', { headers: screen.headers });
  t.equal(manifest.status, 200, `${label}: manifest`);
  const assignment = await app.json(`/api/v1/screens/${screen.screenId}/playlist-assignment`, { headers: owner.headers });
  t.equal(assignment.status, 200, `${label}: assignment`);
  const from = new Date().toISOString();
  const to = new Date(Date.now() + 3600_000).toISOString();
  const preview = await app.json('/api/v1/schedules/preview', { method: 'POST', headers: owner.headers, json: { screenId: screen.screenId, from, to } });
  t.equal(preview.status, 200, `${label}: preview`);
  const detail = await app.json(`/api/v1/screens/${screen.screenId}`, { headers: owner.headers });
  t.equal(detail.status, 200, `${label}: screen detail`);
}

t.test('scanJsonText: depth and entries counted on the text, strings and escapes skipped', async (t) => {
  t.equal(scanJsonText(nestedText(MAX_JSON_DEPTH)), null, 'exactly the limit passes');
  t.match(scanJsonText(nestedText(MAX_JSON_DEPTH + 1)), { limit: 'depth' }, 'one more is refused');
  t.equal(scanJsonText(`{"a":"${'['.repeat(500)}","b":"\\"{{{{[[[["}`), null, 'brackets inside strings (and after an escaped quote) do not count');
  t.equal(scanJsonText(`[${'0,'.repeat(MAX_JSON_ENTRIES - 1)}0]`), null, `${MAX_JSON_ENTRIES} elements pass`);
  t.match(scanJsonText(`[${'0,'.repeat(MAX_JSON_ENTRIES)}0]`), { limit: 'entries' }, 'one more is refused');
  // Members and elements at every level count together: 3 members + 2 elements + 1 member.
  const half = Math.floor(MAX_JSON_ENTRIES / 2);
  t.match(scanJsonText(`{"a":[${'1,'.repeat(half)}1],"b":[${'1,'.repeat(half)}1]}`), { limit: 'entries' }, 'counted across containers');
  t.equal(scanJsonText('{"a":[],"b":{},"c":[1,{"d":null}]}'), null);
});

t.test('checkJsonValue walks without recursion and names a forbidden key with its path', async (t) => {
  let deep: unknown = 1;
  for (let i = 0; i < 200_000; i++) deep = [deep];
  t.match(checkJsonValue(deep), { limit: 'depth' }, '200,000 levels: refused, no stack overflow');
  const poisoned = JSON.parse('{"a":[{"b":1},{"__proto__":{"admin":true}}]}');
  t.match(checkJsonValue(poisoned), { limit: 'key', path: ['a', 1, '__proto__'] });
  t.equal(checkJsonValue({ a: [{ b: 1 }], proto: '__proto__' }), null, 'the name as a value is fine');
});

for (const depth of [MAX_JSON_DEPTH + 1, 1000, 100_000]) {
  t.test(`a heartbeat ${depth} deep is 400 naming the limit, and the screen keeps working`, async (t) => {
    const { app, owner, screen } = await setup(t);
    const res = await post(app, '/api/v1/player/heartbeat', screen.headers, heartbeatText(depth));
    const err = await errorOf(res);
    t.equal(err.status, 400);
    t.equal(err.code, 'validation_failed');
    t.match(err.message, new RegExp(`deeper than ${MAX_JSON_DEPTH} levels`));
    t.match(err.details, { issues: [{ location: 'body', code: 'too_deep' }] });
    const row = await app.deps.db.selectFrom('screens').select('last_status').where('id', '=', screen.screenId).executeTakeFirstOrThrow();
    t.equal(row.last_status, null, 'nothing of it was stored');
    await screenWorks(t, app, owner, screen, `after ${depth}`);
  });
}

t.test('a heartbeat exactly at the limit is accepted and stored readable by SQLite', async (t) => {
  const { app, owner, screen } = await setup(t);
  const res = await post(app, '/api/v1/player/heartbeat', screen.headers, heartbeatText(MAX_JSON_DEPTH));
  t.equal(res.status, 200);
  const row = await sql<{ ok: number }>`select json_valid(last_status) as ok from screens where id = ${screen.screenId}`.execute(app.deps.db);
  t.equal(row.rows[0]!.ok, 1);
  await screenWorks(t, app, owner, screen, 'after the limit');
});

t.test('command params and results: too deep or too many entries is 400, the screen keeps working', async (t) => {
  const { app, owner, screen } = await setup(t);
  for (const depth of [MAX_JSON_DEPTH + 1, 1000, 100_000]) {
    const queued = await post(app, `/api/v1/screens/${screen.screenId}/commands`, owner.headers, `{"type":"reload","params":${nestedText(depth - 1)}}`);
    const err = await errorOf(queued);
    t.equal(err.status, 400, `params ${depth} deep`);
    t.match(err.message, new RegExp(`deeper than ${MAX_JSON_DEPTH}`));
  }
  const many = await post(
    app,
    `/api/v1/screens/${screen.screenId}/commands`,
    owner.headers,
    `{"type":"reload","params":{"list":[${'0,'.repeat(MAX_JSON_ENTRIES)}0]}}`,
  );
  const manyErr = await errorOf(many);
  t.equal(manyErr.status, 400, 'params with too many elements');
  t.match(manyErr.message, new RegExp(`more than ${MAX_JSON_ENTRIES}`));
  t.match(manyErr.details, { issues: [{ code: 'too_many_entries' }] });

  const ok = await app.json(`/api/v1/screens/${screen.screenId}/commands`, {
    method: 'POST',
    headers: owner.headers,
    json: { type: 'reload', params: { a: 1 } },
  });
  t.equal(ok.status, 201);
  const id = ok.body.data.id as string;
  for (const depth of [MAX_JSON_DEPTH + 1, 1000, 100_000]) {
    const res = await post(app, `/api/v1/player/commands/${id}/result`, screen.headers, `{"status":"succeeded","output":${nestedText(depth - 1)}}`);
    const err = await errorOf(res);
    t.equal(err.status, 400, `result ${depth} deep`);
    t.equal(err.code, 'validation_failed');
  }
  const listed = await app.json(`/api/v1/screens/${screen.screenId}/commands`, { headers: owner.headers });
  t.equal(listed.status, 200);
  t.equal(listed.body.data.items[0].result, null, 'no result was stored');
  const result = await app.json(`/api/v1/player/commands/${id}/result`, {
    method: 'POST',
    headers: screen.headers,
    json: { status: 'succeeded', output: { fine: true } },
  });
  t.equal(result.status, 200, 'a sane result is still taken');
  await screenWorks(t, app, owner, screen, 'after the commands');
});

t.test('the limits hold for every JSON route: a console route and a public one', async (t) => {
  const { app, owner } = await setup(t);
  const deep = await post(app, '/api/v1/locations', owner.headers, `{"name":"x","notes":${nestedText(MAX_JSON_DEPTH)}}`);
  t.match(await errorOf(deep), { status: 400, code: 'validation_failed', message: /deeper than 64 levels/ });
  const login = await post(app, '/api/v1/auth/login', {}, `[${'0,'.repeat(MAX_JSON_ENTRIES)}0]`);
  t.match(await errorOf(login), { status: 400, code: 'validation_failed', message: /more than 100000/ });
});

t.test('__proto__ is refused as a key, with the reason; malformed JSON is still malformed_json', async (t) => {
  const { app, owner, screen } = await setup(t);
  const top = await errorOf(await post(app, '/api/v1/player/heartbeat', screen.headers, '{"__proto__":{"admin":true}}'));
  t.equal(top.status, 400);
  t.equal(top.code, 'validation_failed', 'valid JSON: not malformed_json');
  t.match(top.message, /"__proto__"/);
  t.notMatch(top.message, /not valid JSON/);
  t.match(top.details, { issues: [{ location: 'body', path: ['__proto__'], code: 'forbidden_key' }] });
  const nested = await errorOf(await post(app, '/api/v1/locations', owner.headers, '{"name":"x","notes":[{"ok":1},{"__proto__":null}]}'));
  t.match(nested, { status: 400, code: 'validation_failed', message: /"__proto__" \(at notes\.1\.__proto__\)/ });
  const escaped = await errorOf(await post(app, '/api/v1/locations', owner.headers, '{"name":"x","\\u005f_proto__":{}}'));
  t.match(escaped, { code: 'validation_failed', message: /__proto__/ }, 'also when spelt with escapes');
  t.match(await errorOf(await post(app, '/api/v1/locations', owner.headers, '{"name": "x", "')), {
    status: 400,
    code: 'malformed_json',
    message: /not valid JSON/,
  });
  t.match(await errorOf(await post(app, '/api/v1/locations', owner.headers, '42')), { status: 400, code: 'malformed_json', message: /object or array/ });
  const fine = await app.json('/api/v1/locations', { method: 'POST', headers: owner.headers, json: { name: 'proto', timeZone: 'UTC', notes: '__proto__' } });
  t.equal(fine.status, 201, 'the word as a value is fine');
});

t.test('storableJson: what SQLite cannot read is refused with 400, never stored', async (t) => {
  let deep: unknown = 1;
  for (let i = 0; i < 100_000; i++) deep = { x: deep };
  t.throws(() => storableJson(deep, 'params'), { name: 'ApiError', status: 400, code: 'validation_failed', message: /^params nests .* deeper than 64 levels/ });
  let limit: unknown = 1;
  for (let i = 0; i < MAX_JSON_DEPTH - 1; i++) limit = [limit];
  t.equal(storableJson({ a: limit }, 'doc'), JSON.stringify({ a: limit }));
  t.throws(() => storableJson(undefined, 'doc'), ApiError);
  t.throws(() => storableJson({ n: 1n }, 'doc'), ApiError, 'what JSON.stringify cannot write is a 400, not a 500');
  // PostgreSQL's jsonb reads neither (issue 25): refused on both databases, so both answer alike.
  t.throws(() => storableJson({ s: '\ud800' }, 'doc'), { status: 400, message: /^doc holds a NUL character or a broken UTF-16 surrogate/ }, 'a lone surrogate');
  t.throws(() => storableJson({ s: 'a\u0000b' }, 'doc'), { status: 400, message: /NUL/ }, 'a NUL character');
  t.equal(storableJson({ s: '\\u0000 😀' }, 'doc'), '{"s":"\\\\u0000 😀"}', 'an escaped backslash before u0000, and a surrogate pair, are stored');
});

t.test('a screen poisoned before this fix recovers: the migration clears what SQLite cannot read', async (t) => {
  const dir = tempDataDir(t);
  const database = openDatabase(`${dir}/placard.db`);
  t.teardown(() => database.close());
  const repair = MIGRATIONS.find((m) => m.name === 'json_repair')!;
  t.ok(repair, 'the repair migration exists');
  await migrate(
    database.db,
    MIGRATIONS.filter((m) => m.version < repair.version),
  );
  const now = new Date().toISOString();
  const poison = `{"playerVersion":"1","extra":${nestedText(1200)}}`;
  await sql`insert into screens (id, name, created_at, updated_at, last_status) values ('0190f5a2-7b3c-7def-8abc-000000000001', 'Poisoned', ${now}, ${now}, ${poison})`.execute(
    database.db,
  );
  await sql`insert into screens (id, name, created_at, updated_at, last_status) values ('0190f5a2-7b3c-7def-8abc-000000000002', 'Healthy', ${now}, ${now}, '{"playerVersion":"1"}')`.execute(
    database.db,
  );
  for (const [id, params, result] of [
    ['0190f5a2-7b3c-7def-8abc-0000000000c1', nestedText(1200), null],
    ['0190f5a2-7b3c-7def-8abc-0000000000c2', '{}', `{"status":"succeeded","message":null,"output":${nestedText(1200)}}`],
    ['0190f5a2-7b3c-7def-8abc-0000000000c3', '{"a":1}', '{"status":"succeeded","message":null,"output":null}'],
  ] as const) {
    await sql`insert into screen_commands (id, screen_id, type, params, state, source, created_at, expires_at, result)
      values (${id}, '0190f5a2-7b3c-7def-8abc-000000000001', 'reload', ${params}, ${result ? 'succeeded' : 'queued'}, 'console', ${now}, ${now}, ${result})`.execute(
      database.db,
    );
  }
  await t.rejects(sql`select json_extract(last_status, '$.display.width') from screens`.execute(database.db), 'the poisoned row breaks SQLite JSON functions');
  await migrate(database.db);
  const screens = await sql<{ name: string; last_status: string | null }>`select name, last_status from screens order by name`.execute(database.db);
  t.same(
    screens.rows.map((r) => [r.name, r.last_status]),
    [
      ['Healthy', '{"playerVersion":"1"}'],
      ['Poisoned', null],
    ],
  );
  await sql`select json_extract(last_status, '$.display.width') from screens`.execute(database.db);
  const commands = await sql<{ id: string; params: string; result: string | null }>`select id, params, result from screen_commands order by id`.execute(
    database.db,
  );
  t.equal(commands.rows[0]!.params, '{}', 'unreadable params are emptied');
  t.match(JSON.parse(commands.rows[1]!.result!), { status: 'succeeded', output: null, message: /could not be read/ }, 'an unreadable result keeps its status');
  t.equal(commands.rows[2]!.params, '{"a":1}', 'readable rows are untouched');
  const invalid = await sql<{
    n: number;
  }>`select count(*) as n from screen_commands where not json_valid(params) or not json_valid(coalesce(result, '{}'))`.execute(database.db);
  t.equal(Number(invalid.rows[0]!.n), 0);
});
