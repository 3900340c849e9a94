import { spawn } from 'node:child_process';
import path from 'node:path';
import t, { type Test } from 'tap';
import { buildApp } from '../server/src/app.js';
import { testConfig } from '../server/src/config.js';
import { publishDue } from '../server/src/modules/publishing/index.js';
import { newAppDeps } from '../server/src/platform/app-deps.js';
import { migrate, openDatabase } from '../server/src/platform/db/database.js';
import { createLogger } from '../server/src/platform/log.js';
import { listen } from '../server/src/server.js';
import { jsonOver, startApp, type TestApp, tempDataDir } from './helpers/harness.js';
import { publishingWorld } from './helpers/publishing.js';
import { openSocket } from './helpers/screens.js';

const NOPE = '0190f5a2-7b3c-7def-8abc-0123456789ab';
const sub = '/api/v1/content-submissions';
const hist = (id: string) => `/api/v1/content-history/layout/${id}`;

t.test('history, compare, restore-draft and rollback with approvals off (201, screens told within a second)', async (t) => {
  const app = await startApp(t);
  const w = await publishingWorld(app, { approvals: false });
  const owner = w.as(w.owner);
  const editor = w.as(w.editor);
  const publisher = w.as(w.publisher);

  const never = await editor('GET', `${hist(w.layout.id)}/compare`);
  t.equal(never.status, 409, 'published -> draft of a layout never published');
  t.match(never.body.error.message, /never published/);

  t.equal((await owner('POST', `/api/v1/layouts/${w.layout.id}/publish`, { note: 'one' })).status, 200);
  await w.editDraft(w.editor, 500);
  t.equal((await owner('POST', `/api/v1/layouts/${w.layout.id}/publish`, { note: 'two' })).status, 200);
  const list = await editor('GET', `${hist(w.layout.id)}/publications`);
  t.equal(list.status, 200);
  t.same(
    list.body.data.items.map((p: any) => [p.number, p.note, p.source, p.current]),
    [
      [2, 'two', 'edit', true],
      [1, 'one', 'edit', false],
    ],
  );
  const [p2, p1] = list.body.data.items;
  const paged = await editor('GET', `${hist(w.layout.id)}/publications?limit=1`);
  t.equal(paged.body.data.items[0].id, p2.id);
  t.equal((await editor('GET', `${hist(w.layout.id)}/publications?limit=1&cursor=${paged.body.data.nextCursor}`)).body.data.items[0].id, p1.id);

  // Compare two publications: the zone's width changed.
  const cmp = await editor('GET', `${hist(w.layout.id)}/compare?from=${p1.id}&to=${p2.id}`);
  t.equal(cmp.status, 200);
  t.match(cmp.body.data, {
    from: { kind: 'publication', publication: { id: p1.id, number: 1 } },
    to: { kind: 'publication', publication: { id: p2.id, number: 2 } },
    identical: false,
    fields: [],
    items: { added: [], removed: [], moved: [], changed: [{ key: 'left', label: 'Left', fields: [{ field: 'width', from: 960, to: 500 }] }] },
  });
  // Published vs draft (the defaults): identical, then a zone added to the draft.
  t.equal((await editor('GET', `${hist(w.layout.id)}/compare`)).body.data.identical, true);
  const added = await editor('PUT', `/api/v1/layouts/${w.layout.id}/draft`, {
    zones: [
      { id: 'extra', name: 'Extra', x: 1000, y: 0, width: 100, height: 100 },
      { id: 'left', name: 'Left', x: 0, y: 0, width: 500, height: 1080, content: { type: 'playlist', playlistId: w.menu.id } },
    ],
  });
  t.equal(added.status, 200);
  const vsDraft = await editor('GET', `${hist(w.layout.id)}/compare`);
  t.match(vsDraft.body.data, {
    from: { kind: 'publication', publication: { number: 2 } },
    to: { kind: 'draft', publication: null },
    identical: false,
    items: { added: [{ key: 'extra', label: 'Extra' }], removed: [], moved: [], changed: [] },
  });

  // Restore publication 1 as the draft: screens keep publication 2.
  const restored = await editor('POST', `${hist(w.layout.id)}/publications/${p1.id}/restore-draft`);
  t.equal(restored.status, 200);
  t.match(restored.body.data, { type: 'layout', id: w.layout.id, unpublishedChanges: true });
  t.ok(restored.body.data.revision > w.layout.revision);
  t.same(await w.playing(), { number: 2, width: 500 });
  t.equal((await editor('GET', `${hist(w.layout.id)}/compare?from=${p1.id}&to=draft`)).body.data.identical, true, 'the draft is publication 1 again');

  // Rollback: an editor may not while approvals are off; a publisher publishes at once.
  const refused = await editor('POST', `${hist(w.layout.id)}/publications/${p1.id}/rollback`, {});
  t.equal(refused.status, 403);
  t.match(refused.body.error.message, /publisher/);
  const socket = await openSocket(t, app, w.screen.credential);
  const since = Date.now();
  const rolled = await publisher('POST', `${hist(w.layout.id)}/publications/${p1.id}/rollback`, { note: 'back to one' });
  t.equal(rolled.status, 201);
  t.match(rolled.body.data, { publication: { number: 3, source: 'rollback', note: 'back to one', publishedBy: w.publisher.user.id } });
  await socket.next((m) => m.type === 'manifest.changed', since);
  t.same(await w.playing(), { number: 3, width: 960 }, 'screens play publication 1’s content as publication 3');

  // Bad inputs.
  const unknown = await editor('GET', `/api/v1/content-history/gadget/${w.layout.id}/publications`);
  t.equal(unknown.status, 404);
  t.match(unknown.body.error.message, /the types are .*layout/);
  t.equal((await editor('GET', `${hist(NOPE)}/publications`)).status, 404);
  t.equal((await editor('GET', `${hist(w.layout.id)}/compare?from=${NOPE}`)).status, 404, 'no such publication');
  t.equal((await editor('GET', `${hist(w.layout.id)}/compare?from=yesterday`)).status, 400);
  t.equal((await editor('POST', `${hist(w.layout.id)}/publications/${NOPE}/restore-draft`)).status, 404);
  t.equal((await publisher('POST', `${hist(w.layout.id)}/publications/${NOPE}/rollback`, {})).status, 404);
  t.equal((await publisher('POST', `${hist(w.layout.id)}/publications/${p1.id}/rollback`, { note: 7 })).status, 400);
  t.equal((await w.as(w.publisher)('POST', `${hist(NOPE)}/publications/${p1.id}/rollback`, {})).status, 404);
});

t.test('rollback with approvals on: 202, a pending rollback submission, published by a publisher', async (t) => {
  const app = await startApp(t);
  const w = await publishingWorld(app, { approvals: false });
  const owner = w.as(w.owner);
  t.equal((await owner('POST', `/api/v1/layouts/${w.layout.id}/publish`, {})).status, 200);
  await w.editDraft(w.editor, 400);
  t.equal((await owner('POST', `/api/v1/layouts/${w.layout.id}/publish`, {})).status, 200);
  t.equal((await owner('PATCH', '/api/v1/settings', { approvals: { required: true } })).status, 200);
  const p1 = (await owner('GET', `${hist(w.layout.id)}/publications`)).body.data.items[1];
  const res = await w.as(w.editor)('POST', `${hist(w.layout.id)}/publications/${p1.id}/rollback`, {});
  t.equal(res.status, 202);
  t.match(res.body.data.submission, { kind: 'rollback', state: 'pending', message: 'Roll back to publication 1', submittedBy: w.editor.user.id });
  t.same(await w.playing(), { number: 2, width: 400 }, 'nothing changed yet');
  await w.editDraft(w.editor, 123); // a rollback does not go stale with the draft
  const id = res.body.data.submission.id;
  t.equal((await w.as(w.publisher)('POST', `${sub}/${id}/approve`, {})).status, 200);
  const socket = await openSocket(t, app, w.screen.credential);
  const since = Date.now();
  t.equal((await w.as(w.publisher)('POST', `${sub}/${id}/publish`, {})).status, 200);
  await socket.next((m) => m.type === 'manifest.changed', since);
  t.same(await w.playing(), { number: 3, width: 960 });
  t.match((await owner('GET', `${hist(w.layout.id)}/publications`)).body.data.items[0], { number: 3, source: 'rollback', current: true });
});

/** An app over `dataDir` (the harness's startApp makes a new directory each time); `close` ends it. */
async function appOn(t: Test, dataDir: string): Promise<TestApp & { close: () => Promise<void> }> {
  const database = openDatabase(path.join(dataDir, 'placard.db'));
  await migrate(database.db);
  const deps = newAppDeps({ config: testConfig(dataDir), db: database.db, logger: createLogger('silent') });
  const server = await listen(buildApp(deps), '127.0.0.1', 0, 1_000);
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await server.close();
    await deps.periodic.stop();
    await database.close();
  };
  t.teardown(close);
  const doFetch = (p: string, init?: RequestInit) => fetch(server.url + p, init);
  return {
    url: server.url,
    dataDir,
    deps,
    database,
    server,
    httpsUrl: null,
    tls: null,
    fetch: doFetch,
    close,
    json: jsonOver(doFetch),
  };
}

t.test('a scheduled publish survives a restart: the new app publishes it once', async (t) => {
  const dataDir = tempDataDir(t);
  const first = await appOn(t, dataDir);
  const w = await publishingWorld(first);
  // Three processes race for it once it is due: the restarted server and two more processes on
  // the same database file, each ticking the scheduler (in one process better-sqlite3 would wait
  // for the lock synchronously, so the racers are real processes, started and ready first).
  const racer = () => {
    const child = spawn(process.execPath, ['--import=tsx', path.join(import.meta.dirname, 'helpers/publish-due-child.ts'), dataDir, '2500'], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let out = '';
    const ready = new Promise<void>((resolve) => child.stdout.on('data', (d) => (out += d).includes('ready') && resolve()));
    const published = new Promise<number>((resolve, reject) => {
      child.on('error', reject);
      child.on('exit', (code) => (code === 0 ? resolve(Number(/published (\d+)/.exec(out)?.[1])) : reject(new Error(`racer exited ${code}`))));
    });
    return { child, ready, published };
  };
  const racers = [racer(), racer()];
  await Promise.all(racers.map((r) => r.ready));

  const s = (await w.as(w.editor)('POST', `${sub}/layout/${w.layout.id}`, {})).body.data;
  await w.as(w.publisher)('POST', `${sub}/${s.id}/approve`, {});
  const at = Date.now() + 1500;
  t.equal((await w.as(w.publisher)('POST', `${sub}/${s.id}/schedule`, { publishAt: new Date(at).toISOString() })).status, 200);
  await first.close(); // the server stops before the time
  const second = await appOn(t, dataDir);
  for (const r of racers) r.child.stdin.end(`${at}\n`);

  await new Promise((r) => setTimeout(r, at - Date.now()));
  let here = 0;
  for (const until = Date.now() + 2500; Date.now() < until; await new Promise((r) => setTimeout(r, 20))) here += await publishDue(second.deps);
  const counts = [here, ...(await Promise.all(racers.map((r) => r.published)))];
  t.equal(
    counts.reduce((a, b) => a + b, 0),
    1,
    `three processes ticking on one database published it once (${counts.join(', ')})`,
  );
  const pubs = await second.deps.db.selectFrom('layout_revisions').select(['number', 'source']).where('layout_id', '=', w.layout.id).execute();
  t.same(pubs, [{ number: 1, source: 'submission' }]);
  const row = await second.deps.db.selectFrom('content_submissions').select(['state', 'publication_number']).where('id', '=', s.id).executeTakeFirst();
  t.same(row, { state: 'published', publication_number: 1 });
});
