import { createHash } from 'node:crypto';
import t, { type Test } from 'tap';
import { ManifestDto } from '../server/src/modules/content/manifest.routes.js';
import { rebuildExpiredOutputs } from '../server/src/modules/data-sources/outputs.service.js';
import { signedInApp } from './helpers/auth.js';
import { createSource, fakeFeed, jsonDoc, refreshNow } from './helpers/data-sources.js';
import { openSocket, pairScreen } from './helpers/screens.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const menu = (...items: [string, number][]) => ({ items: items.map(([name, price]) => ({ name, price })) });

/** A JSON source on a fake feed, a layout with a zone showing it (whole, and a view), scheduled on one of two screens. */
async function setup(t: Test) {
  const { app, owner, call } = await signedInApp(t, { config: { fetchAllowLoopback: true } });
  const feed = await fakeFeed(t);
  let doc = menu(['Tea', 2], ['Cake', 4], ['Soup', 6]);
  let etag = '"v1"';
  feed.routes.set('/menu.json', (req, res) => jsonDoc(doc, etag)(req, res));
  const made = await createSource(app, owner, { name: 'Menu', provider: 'json', config: { url: `${feed.url}/menu.json`, rowsPath: '$.items[*]' } });
  t.equal(made.status, 201, JSON.stringify(made.body));
  const source = made.body.data as { id: string; revision: number };
  await refreshNow(app, source.id);
  const cheap = { filter: [{ field: 'price', op: 'lt', value: 5 }], sort: [{ field: 'name', direction: 'asc' }] };
  const layout = (await call('POST', '/api/v1/layouts', { name: 'Menu board' })).body.data;
  const draft = await call(
    'PUT',
    `/api/v1/layouts/${layout.id}/draft`,
    {
      width: 1920,
      height: 1080,
      zones: [
        { name: 'All', x: 0, y: 0, width: 960, height: 1080, content: { type: 'data', sourceId: source.id } },
        { name: 'Cheap', x: 960, y: 0, width: 960, height: 1080, content: { type: 'data', sourceId: source.id, view: cheap } },
      ],
    },
    { 'if-match': String(layout.revision) },
  );
  t.equal(draft.status, 200, JSON.stringify(draft.body));
  t.equal((await call('POST', `/api/v1/layouts/${layout.id}/publish`, {})).status, 200);
  const screen = await pairScreen(app, owner, { name: 'Counter' });
  const other = await pairScreen(app, owner, { name: 'Back office' });
  const sched = await call('POST', '/api/v1/schedules', {
    name: 'Menu all day',
    content: { layoutId: layout.id },
    targets: { screenIds: [screen.screenId] },
    startsAt: new Date(Date.now() - 60_000).toISOString(),
  });
  t.equal(sched.status, 201, JSON.stringify(sched.body));
  const manifest = async (s = screen) => (await app.json('/api/v1/player/manifest', { headers: s.headers })).body.data;
  const setDoc = (d: typeof doc, tag: string) => {
    doc = d;
    etag = tag;
  };
  return { app, owner, call, feed, source, layout, screen, other, manifest, setDoc, cheap };
}

t.test('a screen’s manifest lists the outputs its data zones show; the device downloads them with its credential and the sha256 matches', async (t) => {
  const { app, source, screen, other, manifest } = await setup(t);
  const m = await manifest();
  t.ok(ManifestDto.safeParse(m).success, 'the manifest matches its documented schema');
  t.equal(m.data.length, 2, 'the whole source and the view');
  const whole = m.data.find((d: any) => d.viewKey === null);
  const view = m.data.find((d: any) => d.viewKey !== null);
  t.match(view.viewKey, /^[0-9a-f]{16}$/);
  const zones = m.timeline.find((s: any) => s.layout).layout.zones;
  t.same(
    zones.map((z: any) => z.data?.outputId),
    [whole.outputId, view.outputId],
    'each zone names the output it shows',
  );

  for (const entry of [whole, view]) {
    const res = await fetch(`${app.url}${entry.url}`, { headers: screen.headers });
    t.equal(res.status, 200);
    t.match(res.headers.get('content-type'), /application\/json/);
    const bytes = Buffer.from(await res.arrayBuffer());
    t.equal(bytes.length, entry.sizeBytes);
    t.equal(sha(bytes), entry.sha256, 'the bytes hash to the manifest’s sha256');
    t.equal(res.headers.get('etag'), `"${entry.sha256}"`);
    const again = await fetch(`${app.url}${entry.url}`, { headers: { ...screen.headers, 'if-none-match': `"${entry.sha256}"` } });
    t.equal(again.status, 304, 'If-None-Match answers 304');
    const head = await fetch(`${app.url}${entry.url}`, { method: 'HEAD', headers: screen.headers });
    t.equal(head.status, 200);
    t.equal(Number(head.headers.get('content-length')), entry.sizeBytes);
  }
  const doc = JSON.parse(Buffer.from(await (await fetch(`${app.url}${view.url}`, { headers: screen.headers })).arrayBuffer()).toString());
  t.equal(doc.sourceId, source.id);
  t.equal(doc.viewKey, view.viewKey);
  t.equal(doc.revision, view.revision);
  t.match(doc.generatedAt, /^\d{4}-\d\d-\d\dT/);
  t.same(
    doc.columns.map((c: any) => [c.name, c.type]),
    [
      ['name', 'text'],
      ['price', 'number'],
    ],
  );
  t.same(doc.rows, [
    { name: 'Cake', price: 4 },
    { name: 'Tea', price: 2 },
  ]);

  // Another screen, a bad credential, an unknown id: 404 / 401, never the data.
  t.equal((await fetch(`${app.url}${whole.url}`, { headers: other.headers })).status, 404, 'a screen that does not show the source');
  t.equal((await fetch(`${app.url}${whole.url}`)).status, 401);
  t.equal((await fetch(`${app.url}/api/v1/player/data-outputs/0190f5a2-7b3c-7def-8abc-000000000999`, { headers: screen.headers })).status, 404);
  t.equal((await fetch(`${app.url}/api/v1/player/data-outputs/not-an-id`, { headers: screen.headers })).status, 404, 'a malformed id is simply not found');
});

t.test('a feed change reaches the screen using it as manifest.changed within a second, and only that screen; an unchanged fetch builds nothing', async (t) => {
  const { app, owner, source, screen, other, manifest, setDoc } = await setup(t);
  const before = await manifest();
  await manifest(other);
  const socket = await openSocket(t, app, screen.credential);
  const otherSocket = await openSocket(t, app, other.credential);
  const outputs = async () => (await app.json(`/api/v1/data-sources/${source.id}/outputs`, { headers: owner.headers })).body.data;
  const versions0 = (await outputs()).outputs.length;

  // The feed answers 304 (ETag): nothing is built, nobody is told.
  await refreshNow(app, source.id);
  t.equal((await outputs()).outputs.length, versions0, 'a 304 builds nothing');

  // Soup's price changes: the whole source changes, the view of cheap items does not.
  setDoc(menu(['Tea', 2], ['Cake', 4], ['Soup', 7]), '"v2"');
  let sent = Date.now();
  await refreshNow(app, source.id);
  const pushed = await socket.next((m) => m.type === 'manifest.changed' && m.revision > before.revision, sent);
  const after = await manifest();
  t.equal(after.revision, pushed.revision);
  const whole0 = before.data.find((d: any) => d.viewKey === null);
  const view0 = before.data.find((d: any) => d.viewKey !== null);
  const whole1 = after.data.find((d: any) => d.viewKey === null);
  const view1 = after.data.find((d: any) => d.viewKey !== null);
  t.not(whole1.sha256, whole0.sha256, 'the whole source’s output is new');
  t.equal(whole1.revision, whole0.revision + 1);
  t.equal(view1.outputId, view0.outputId, 'the view gave the same rows: its version stays');
  const kept = await app.deps.db
    .selectFrom('data_source_outputs')
    .select(['revision', 'checked_revision'])
    .where('id', '=', view1.outputId)
    .executeTakeFirstOrThrow();
  t.same(kept, { revision: view0.revision, checked_revision: whole1.revision }, 'checked against the new data once, not rebuilt on every manifest build');
  const doc = JSON.parse(Buffer.from(await (await fetch(`${app.url}${whole1.url}`, { headers: screen.headers })).arrayBuffer()).toString());
  t.same(
    doc.rows.find((r: any) => r.name === 'Soup'),
    { name: 'Soup', price: 7 },
  );
  t.same(
    otherSocket.messages.filter((m) => m.type === 'manifest.changed'),
    [],
    'the screen that does not show the source is not told',
  );

  // The previous version still downloads for a player on the older manifest.
  t.equal((await fetch(`${app.url}${whole0.url}`, { headers: screen.headers })).status, 200);

  // The same bytes without an ETag (a 200 with identical data): no revision, nothing built.
  setDoc(menu(['Tea', 2], ['Cake', 4], ['Soup', 7]), '');
  const versions1 = (await outputs()).outputs.length;
  await refreshNow(app, source.id);
  t.equal((await outputs()).outputs.length, versions1, 'identical data builds nothing');

  // A change only the view sees pushes again; versions are kept at three per output.
  for (const [i, price] of [1, 3, 1.5].entries()) {
    setDoc(menu(['Tea', price], ['Cake', 4], ['Soup', 7]), `"w${i}"`);
    sent = Date.now();
    await refreshNow(app, source.id);
    await socket.next((m) => m.type === 'manifest.changed' && m.revision > pushed.revision + i, sent);
    await manifest();
  }
  const listed = await outputs();
  const byKey = new Map<string | null, any[]>();
  for (const o of listed.outputs) byKey.set(o.viewKey, [...(byKey.get(o.viewKey) ?? []), o]);
  t.same(
    [...byKey.values()].map((l) => l.length),
    [3, 3],
    'three versions per output',
  );
  t.same(
    [...byKey.values()].map((l) => l.filter((o) => o.current).length),
    [1, 1],
    'one current each',
  );
  const blobs = await app.deps.db.selectFrom('data_output_blobs').select('sha256').execute();
  t.equal(blobs.length, new Set(listed.outputs.map((o: any) => o.sha256)).size, 'documents no version references are gone');
  t.same(
    listed.usedBy.map((u: any) => u.type),
    ['layout'],
  );
});

t.test('outputs: listed with sizes and users; rebuild makes new versions and tells the screens; deleting a used source is refused', async (t) => {
  const { app, owner, call, source, layout, screen, manifest } = await setup(t);
  const before = await manifest();
  const socket = await openSocket(t, app, screen.credential);
  const listed = (await call('GET', `/api/v1/data-sources/${source.id}/outputs`)).body.data;
  t.equal(listed.keys.length, 2);
  t.ok(listed.keys.some((k: any) => k.viewKey === null && k.view === null));
  t.ok(listed.keys.some((k: any) => k.view?.filter?.[0]?.field === 'price'));
  for (const o of listed.outputs) t.ok(o.sizeBytes > 0 && o.rowCount > 0 && o.current);

  const sent = Date.now();
  const rebuilt = await call('POST', `/api/v1/data-sources/${source.id}/outputs/rebuild`);
  t.equal(rebuilt.status, 200);
  t.equal(rebuilt.body.data.outputs.length, 4, 'a new version of each');
  await socket.next((m) => m.type === 'manifest.changed' && m.revision > before.revision, sent);

  const viewer = await import('./helpers/auth.js').then((a) => a.signIn(app, { role: 'viewer' }));
  t.equal((await app.json(`/api/v1/data-sources/${source.id}/outputs/rebuild`, { method: 'POST', headers: viewer.headers })).status, 403);
  t.equal((await app.json(`/api/v1/data-sources/${source.id}/outputs`, { headers: viewer.headers })).status, 200);
  t.equal((await call('GET', '/api/v1/data-sources/0190f5a2-7b3c-7def-8abc-000000000999/outputs')).status, 404);

  const diag = (await call('GET', `/api/v1/data-sources/${source.id}/diagnostics`)).body.data;
  t.same(
    diag.screens.map((x: any) => x.id),
    [screen.screenId],
    'diagnostics name the screen showing it (not the other)',
  );
  t.equal(diag.outputs.length, 2, 'and its current outputs');
  const del = await call('DELETE', `/api/v1/data-sources/${source.id}`, undefined, { 'if-match': String(source.revision) });
  t.equal(del.status, 409);
  t.match(del.body.error.message, /Menu board/);
  t.same(
    del.body.error.details.usedBy.map((u: any) => [u.type, u.id]),
    [['layout', layout.id]],
  );
  void owner;
});

t.test('a layout zone naming an unknown source or a view that does not fit is refused where it is', async (t) => {
  const { call, source, layout } = await setup(t);
  const put = (content: unknown) =>
    call('PUT', `/api/v1/layouts/${layout.id}/draft`, { width: 1920, height: 1080, zones: [{ name: 'Z', x: 0, y: 0, width: 100, height: 100, content }] });
  const ghost = await put({ type: 'data', sourceId: '0190f5a2-7b3c-7def-8abc-000000000999' });
  t.equal(ghost.status, 400);
  t.same(ghost.body.error.details.issues[0].path, ['zones', 0, 'content', 'sourceId']);
  const badView = await put({ type: 'data', sourceId: source.id, view: { filter: [{ field: 'colour', op: 'eq', value: 'red' }] } });
  t.equal(badView.status, 400);
  t.same(badView.body.error.details.issues[0].path, ['zones', 0, 'content', 'view']);
  t.match(badView.body.error.message, /colour/);
  const badOp = await put({ type: 'data', sourceId: source.id, view: { filter: [{ field: 'price', op: 'startsWith', value: 'x' }] } });
  t.equal(badOp.status, 400);
  const notAView = await put({ type: 'data', sourceId: source.id, view: { filter: 'cheap' } });
  t.equal(notAView.status, 400);
});

t.test('a view with relative dates expires at the next midnight in the source’s zone and is rebuilt then', async (t) => {
  const { app, owner, call, screen, manifest } = await setup(t);
  const londonDay = (ms: number) => new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/London' }).format(new Date(ms));
  const today = londonDay(Date.now());
  // The calendar day after today (noon UTC of today's date plus a day: no zone arithmetic, right at any hour).
  const tomorrow = new Date(Date.parse(`${today}T12:00:00Z`) + 24 * 3600_000).toISOString().slice(0, 10);
  const made = await createSource(app, owner, {
    name: 'Classes',
    provider: 'manual-table',
    timeZone: 'Europe/London',
    config: {
      columns: [
        { name: 'class', type: 'text' },
        { name: 'day', type: 'date' },
      ],
    },
    rows: [
      { class: 'Yoga', day: today },
      { class: 'Spin', day: tomorrow },
    ],
  });
  t.equal(made.status, 201, JSON.stringify(made.body));
  const layout = (await call('POST', '/api/v1/layouts', { name: 'Today' })).body.data;
  await call(
    'PUT',
    `/api/v1/layouts/${layout.id}/draft`,
    {
      zones: [
        {
          name: 'Today',
          x: 0,
          y: 0,
          width: 100,
          height: 100,
          content: { type: 'data', sourceId: made.body.data.id, view: { filter: [{ field: 'day', op: 'eq', value: 'today' }] } },
        },
      ],
    },
    { 'if-match': String(layout.revision) },
  );
  await call('POST', `/api/v1/layouts/${layout.id}/publish`, {});
  await call('POST', '/api/v1/schedules', {
    name: 'Today',
    content: { layoutId: layout.id },
    targets: { screenIds: [screen.screenId] },
    startsAt: new Date(Date.now() - 60_000).toISOString(),
    priority: 10,
  });
  const m = await manifest();
  const entry = m.data.find((d: any) => d.sourceId === made.body.data.id);
  t.ok(entry, 'the view is in the manifest');
  const out = (await call('GET', `/api/v1/data-sources/${made.body.data.id}/outputs`)).body.data.outputs[0];
  t.ok(out.expiresAt, 'it expires');
  const expires = new Date(out.expiresAt);
  t.ok(expires.getTime() > Date.now() && expires.getTime() <= Date.now() + 25 * 3600_000, 'within a day');
  t.match(
    new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/London', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(expires),
    '00:00',
    'at midnight in London',
  );
  // The tick after midnight builds it again for that day.
  const changed = await rebuildExpiredOutputs(app.deps, new Date(expires.getTime() + 60_000));
  const rows = async () => {
    const list = (await call('GET', `/api/v1/data-sources/${made.body.data.id}/outputs`)).body.data.outputs;
    const current = list.find((o: any) => o.current);
    return { current, count: list.length };
  };
  const next = await rows();
  t.equal(londonDay(expires.getTime() + 60_000), tomorrow);
  t.same(changed, [{ sourceId: made.body.data.id, viewKeys: [entry.viewKey] }], 'the view gave other rows: a new version');
  t.equal(next.count, 2);
  const doc = JSON.parse(Buffer.from(await (await fetch(`${app.url}${next.current.url}`, { headers: screen.headers })).arrayBuffer()).toString());
  t.same(doc.rows, [{ class: 'Spin', day: tomorrow }], 'tomorrow’s class');
  t.ok(new Date(next.current.expiresAt).getTime() > expires.getTime(), 'expires a day later');
  t.same(await rebuildExpiredOutputs(app.deps, new Date(expires.getTime() + 120_000)), [], 'nothing more to rebuild');
});
