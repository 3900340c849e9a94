import { AuthenticatorEmulator, PasskeysCredentialsMemoryRepository, WebAuthnEmulator } from 'nid-webauthn-emulator';
import { sql } from 'kysely';
import t, { type Test } from 'tap';
import { z } from 'zod';
import { constraintKey, describeUniqueViolation, UNIQUE_MEANINGS, uniqueViolationOf } from '../server/src/platform/db/constraints.js';
import { created, defineRoute } from '../server/src/platform/http/route.js';
import { signedInApp, signIn } from './helpers/auth.js';
import { contended, startApp, type TestApp } from './helpers/harness.js';
import { TEST_DATABASE_URL } from './helpers/postgres.js';
import { pairScreen } from './helpers/screens.js';

/**
 * Issue 15, "Races answer 500": requests that both pass an "is it free?" check and then
 * insert end with SQLite refusing all but one. Those refusals answer 409 `conflict` (one
 * mapping, platform/http/errors.ts), never 500. Each resource with a unique name or key is
 * created by several requests at once over real HTTP; the statuses must be exactly one
 * success and conflicts for the rest (or all successes where the write is idempotent), and
 * the database must hold one row.
 */

type Answer = { status: number; body: any };

const statuses = (answers: Answer[]) => answers.map((a) => a.status).sort((a, b) => a - b);
const times = <T>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));

/** One 2xx of `success`, the rest 409 `conflict` naming `fields`, no SQL in any message. */
function oneWins(t: Test, answers: Answer[], success: number, fields: string[], label: string) {
  t.same(statuses(answers), [success, ...times(answers.length - 1, () => 409)], `${label}: one ${success}, the rest 409`);
  for (const a of answers.filter((x) => x.status === 409)) {
    t.equal(a.body?.error?.code, 'conflict', `${label}: code conflict`);
    t.notMatch(a.body?.error?.message ?? '', /constraint|SQLITE|UNIQUE|insert|content_|_id\b/i, `${label}: no SQL in the message`);
    if (fields.length) t.same(a.body.error.details?.fields, fields, `${label}: details.fields names ${fields.join(', ')}`);
  }
}

const setup = (t: Test) => signedInApp(t);

const count = async (app: TestApp, query: ReturnType<typeof sql<{ n: number }>>) => Number((await query.execute(app.deps.db)).rows[0]!.n);

t.test('users: concurrent creates with one email (any case) make one user; the rest answer 409', async (t) => {
  const { app, call } = await setup(t);
  const emails = ['race@example.test', 'RACE@example.test', 'Race@Example.test', 'race@EXAMPLE.TEST', 'race@example.test', 'rAce@example.test'];
  // Fired at once, without a password (no hashing between the check and the insert)...
  const plain = await Promise.all(emails.map((email, i) => call('POST', '/api/v1/users', { email, displayName: `R${i}`, role: 'viewer' })));
  oneWins(t, plain, 201, [], 'no password');
  // ...and with every request's check queued before any insert (the database held meanwhile).
  const held = await contended(app, () =>
    emails.map((email, i) => call('POST', '/api/v1/users', { email: email.replace(/race/i, 'held'), displayName: `H${i}`, role: 'viewer' })),
  );
  oneWins(t, held, 201, [], 'no password, contended');
  const hashed = await contended(app, () =>
    emails.map((email, i) =>
      call('POST', '/api/v1/users', { email: email.replace(/race/i, 'pw'), displayName: `P${i}`, role: 'editor', password: 'correct horse battery staple' }),
    ),
  );
  oneWins(t, hashed, 201, [], 'with a password');
  t.equal(
    await count(app, sql<{ n: number }>`select count(*) as n from users where email in ('race@example.test', 'held@example.test', 'pw@example.test')`),
    3,
    'one row each',
  );
  // The race loser is told which field (the check before the insert says it in words; the constraint in details).
  const raced = [...plain, ...held, ...hashed].filter((a) => a.status === 409 && a.body.error.details?.fields);
  t.ok(raced.length > 0, 'the race happened: some 409s came from the constraint, not the check');
  for (const a of raced) t.same(a.body.error.details.fields, ['email']);
});

t.test('setup: concurrent first-owner requests make one owner', async (t) => {
  const app = await startApp(t);
  const answers = await Promise.all(
    times(5, (i) =>
      app.json('/api/v1/auth/setup', {
        method: 'POST',
        json: { email: `first${i}@example.test`, password: 'correct horse battery staple', displayName: 'First' },
      }),
    ),
  );
  oneWins(t, answers, 201, [], 'setup');
  t.equal(await count(app, sql<{ n: number }>`select count(*) as n from users`), 1);
});

t.test('folders, collections, tags: concurrent creates with one name make one; renames onto one name too', async (t) => {
  const { app, call } = await setup(t);
  const names = ['Menus', 'MENUS', 'menus', 'Menus', 'mEnus', 'Menus'];

  const folders = await Promise.all(names.map((name) => call('POST', '/api/v1/content-folders', { name })));
  oneWins(t, folders, 201, ['name'], 'top-level folders');
  const parent = folders.find((f) => f.status === 201)!.body.data.id;
  const inside = await Promise.all(names.map((name) => call('POST', '/api/v1/content-folders', { name, parentId: parent })));
  oneWins(t, inside, 201, ['name'], 'folders in a folder (the same name elsewhere is fine)');
  t.equal(await count(app, sql<{ n: number }>`select count(*) as n from content_folders where lower(name) = 'menus'`), 2);

  // Two folders renamed to one name at once: one wins.
  const a = (await call('POST', '/api/v1/content-folders', { name: 'A' })).body.data.id;
  const b = (await call('POST', '/api/v1/content-folders', { name: 'B' })).body.data.id;
  const renames = await Promise.all([a, b, a, b].map((id) => call('PATCH', `/api/v1/content-folders/${id}`, { name: 'Drinks' })));
  t.equal(renames.filter((r) => r.status === 200).length >= 1, true, 'a rename wins');
  t.equal(renames.filter((r) => r.status >= 500).length, 0, 'no 5xx');
  for (const r of renames.filter((x) => x.status !== 200)) t.match(r, { status: 409, body: { error: { code: 'conflict', details: { fields: ['name'] } } } });
  t.equal(await count(app, sql<{ n: number }>`select count(*) as n from content_folders where name = 'Drinks'`), 1);
  // A move onto a taken name is the same conflict.
  const moved = await call('PATCH', `/api/v1/content-folders/${b}`, { name: 'Menus', parentId: parent });
  t.match(moved, { status: 409, body: { error: { code: 'conflict', message: 'A folder with this name already exists there' } } });

  const collections = await Promise.all(names.map((name) => call('POST', '/api/v1/content-collections', { name })));
  oneWins(t, collections, 201, ['name'], 'collections');
  const tags = await Promise.all(names.map((name) => call('POST', '/api/v1/content-tags', { name })));
  oneWins(t, tags, 201, ['name'], 'tags');
  t.equal(await count(app, sql<{ n: number }>`select count(*) as n from content_tags`), 1);
});

t.test('passkeys: one credential registered by concurrent requests is stored once', async (t) => {
  const origin = 'http://localhost';
  const app = await startApp(t, { config: { publicUrl: origin } });
  const owner = await signIn(app);
  const authenticator = new WebAuthnEmulator(new AuthenticatorEmulator({ credentialsRepository: new PasskeysCredentialsMemoryRepository() }));
  const options = await app.json('/api/v1/me/security/passkeys/options', { method: 'POST', headers: owner.headers });
  const credential = authenticator.createJSON(origin, options.body.data);
  // The requests all load the session (its challenge) before any of them saves it.
  const answers = await contended(app, () =>
    times(4, (i) => app.json('/api/v1/me/security/passkeys', { method: 'POST', headers: owner.headers, json: { response: credential, name: `Key ${i}` } })),
  );
  t.equal(answers.filter((a) => a.status === 201).length, 1, `one registration: ${statuses(answers)}`);
  for (const a of answers.filter((x) => x.status !== 201)) {
    t.ok(a.status === 409 || a.status === 401, `the others: 409 (already registered) or 401 (challenge used), got ${a.status}`);
    if (a.status === 409) t.equal(a.body.error.code, 'conflict');
  }
  t.equal(await count(app, sql<{ n: number }>`select count(*) as n from passkeys`), 1, 'stored once');
});

t.test('idempotent writes on composite keys: memberships, assignments, revisions, tags through assets', async (t) => {
  const { app, owner, call } = await setup(t);
  const screen = await pairScreen(app, owner);
  const group = (await call('POST', '/api/v1/screen-groups', { name: 'Bar' })).body.data;
  const joins = await Promise.all(times(6, () => call('POST', `/api/v1/screen-groups/${group.id}/screens`, { screenIds: [screen.screenId] })));
  t.same(
    statuses(joins),
    times(6, () => 200),
    'adding a member is idempotent',
  );
  t.equal(await count(app, sql<{ n: number }>`select count(*) as n from screen_group_members where group_id = ${group.id}`), 1);

  const playlists = await Promise.all(times(6, (i) => call('POST', '/api/v1/playlists', { name: `P${i}` })));
  t.same(
    statuses(playlists),
    times(6, () => 201),
    'playlist names are not unique',
  );
  const assigned = await Promise.all(
    playlists.map((p) => call('PUT', `/api/v1/screens/${screen.screenId}/playlist-assignment`, { playlistId: p.body.data.id })),
  );
  t.same(
    statuses(assigned),
    times(6, () => 200),
    'assignments replace each other',
  );
  t.equal(await count(app, sql<{ n: number }>`select count(*) as n from playlist_assignments where target_id = ${screen.screenId}`), 1);

  const layout = (await call('POST', '/api/v1/layouts', { name: 'L', zones: [] })).body.data;
  const published = await Promise.all(times(6, (i) => call('POST', `/api/v1/layouts/${layout.id}/publish`, { note: `n${i}` })));
  t.same(
    statuses(published),
    times(6, () => 200),
    'publishes without If-Match all land',
  );
  const numbers = (await call('GET', `/api/v1/layouts/${layout.id}/revisions`)).body.data.items.map((r: any) => r.number).sort();
  t.same(numbers, [1, 2, 3, 4, 5, 6], 'each its own revision number');

  const tokens = await Promise.all(times(4, () => call('POST', '/api/v1/integration-tokens', { name: 'Same', capabilities: ['fleet_health:read'] })));
  t.same(statuses(tokens), [201, 201, 201, 201], 'token names are not unique; each token its own public id');
  t.equal(new Set(tokens.map((x) => x.body.data.token.split('.')[0])).size, 4);
});

t.test(
  'the mapping: SQLite names the constraint; the answer names fields, not SQL',
  { skip: TEST_DATABASE_URL ? 'writes through the SQLite handle' : false },
  async (t) => {
    const app = await startApp(t);
    const sqlite = app.database.sqlite;
    const failure = (statement: string) => {
      try {
        sqlite.exec(statement);
      } catch (err) {
        return err;
      }
      throw new Error(`no failure: ${statement}`);
    };
    sqlite.exec(`insert into content_tags (id, name, created_at) values ('t1', 'Menu', 'x')`);
    const byColumnIndex = uniqueViolationOf(failure(`insert into content_tags (id, name, created_at) values ('t2', 'MENU', 'x')`));
    t.same(byColumnIndex, { table: 'content_tags', columns: ['name'], index: null }, 'an index on a column (collate nocase) names the column');
    t.same(describeUniqueViolation(byColumnIndex!), { fields: ['name'], message: 'A tag with this name already exists' });
    sqlite.exec(`insert into content_folders (id, name, parent_id, created_at, updated_at) values ('f1', 'Menu', null, 'x', 'x')`);
    const onExpression = uniqueViolationOf(
      failure(`insert into content_folders (id, name, parent_id, created_at, updated_at) values ('f2', 'MENU', null, 'x', 'x')`),
    );
    t.same(onExpression, { table: null, columns: [], index: 'content_folders_name' }, 'an index on an expression names only the index');
    t.same(describeUniqueViolation(onExpression!), { fields: ['name'], message: 'A folder with this name already exists there' });
    const byKey = uniqueViolationOf(failure(`insert into content_tags (id, name, created_at) values ('t1', 'Other', 'x')`));
    t.same(byKey, { table: 'content_tags', columns: ['id'], index: null }, 'a primary key');
    t.same(describeUniqueViolation(byKey!).fields, ['id']);
    t.equal(uniqueViolationOf(failure(`insert into no_such_table values (1)`)), null, 'another SQLite error is not a unique violation');
    sqlite.exec(`insert into meta (key, value) values ('k', 'v')`);
    t.equal(uniqueViolationOf(new Error('UNIQUE constraint failed: users.email')), null, 'only SQLite’s own errors, not a message that looks like one');
    t.equal(uniqueViolationOf(failure(`insert into users (id) values (null)`)), null, 'NOT NULL is not a unique violation');
    const wrapped = new Error('wrapped', { cause: failure(`insert into meta (key, value) values ('k', 'w')`) });
    t.same(uniqueViolationOf(wrapped), { table: 'meta', columns: ['key'], index: null }, 'found through cause');
    t.same(
      describeUniqueViolation({ table: 'x', columns: ['screen_id', 'started_at'], index: null }).fields,
      ['screenId', 'startedAt'],
      'column names in camelCase',
    );
  },
);

t.test(
  'every unique index on expressions is described, and every description names a real constraint',
  { skip: TEST_DATABASE_URL ? "reads SQLite's schema table (the same indexes are made on PostgreSQL)" : false },
  async (t) => {
    const app = await startApp(t);
    const sqlite = app.database.sqlite;
    const tables = sqlite.prepare(`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`).all() as { name: string }[];
    const keys = new Set<string>();
    const undescribed: string[] = [];
    for (const { name: table } of tables) {
      for (const idx of sqlite.pragma(`index_list("${table}")`) as { name: string; unique: number }[]) {
        if (!idx.unique) continue;
        const cols = (sqlite.pragma(`index_xinfo("${idx.name}")`) as { cid: number; name: string | null; key: number }[]).filter((c) => c.key);
        const onExpression = cols.some((c) => c.cid === -2);
        const key = constraintKey(onExpression ? { table: null, columns: [], index: idx.name } : { table, columns: cols.map((c) => c.name!), index: null });
        keys.add(key);
        if (onExpression && !UNIQUE_MEANINGS[key]) undescribed.push(idx.name);
      }
    }
    t.ok(keys.has('users.email') && keys.has('content_folders_name'), `the walk sees the schema's constraints (${keys.size})`);
    t.same(undescribed, [], 'indexes on expressions (SQLite names only the index) have a meaning in platform/db/constraints.ts');
    t.same(
      Object.keys(UNIQUE_MEANINGS).filter((k) => !keys.has(k)),
      [],
      'no stale meaning (a renamed index or column)',
    );
  },
);

t.test('one place: a route that hits a constraint answers 409 without catching it, and must declare it', async (t) => {
  const insertTwice = (path: string, declare: boolean) =>
    defineRoute({
      method: 'POST',
      path,
      auth: 'public',
      tags: ['Test'],
      summary: 'inserts one meta key twice',
      body: z.object({ key: z.string() }),
      responses: declare
        ? { 201: { description: 'never', data: z.object({}) }, 409: { description: 'conflict: the key exists' } }
        : { 201: { description: 'never', data: z.object({}) } },
      handler: async (ctx, { body }) => {
        await ctx.deps.db.insertInto('meta').values({ key: body.key, value: '1' }).execute();
        await ctx.deps.db.insertInto('meta').values({ key: body.key, value: '2' }).execute();
        return created({});
      },
    });
  const app = await startApp(t, { extraRoutes: [insertTwice('/api/v1/test-declared', true), insertTwice('/api/v1/test-undeclared', false)] });
  const declared = await app.json('/api/v1/test-declared', { method: 'POST', json: { key: 'a' } });
  t.match(declared, {
    status: 409,
    body: { error: { code: 'conflict', message: 'This already exists: another one has the same key', details: { fields: ['key'] } } },
  });
  const undeclared = await app.json('/api/v1/test-undeclared', { method: 'POST', json: { key: 'b' } });
  t.equal(undeclared.status, 500, 'the response check refuses a 409 the route does not declare (tests run with it on)');
  const lax = await startApp(t, { extraRoutes: [insertTwice('/api/v1/test-undeclared', false)], config: { validateResponses: false } });
  t.equal((await lax.json('/api/v1/test-undeclared', { method: 'POST', json: { key: 'c' } })).status, 409, 'in production it answers 409');
});
