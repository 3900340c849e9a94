import t, { type Test } from 'tap';
import { instanceScreenIds, pluginInstalled } from '../server/src/modules/plugins/index.js';
import { signedInApp, signIn } from './helpers/auth.js';
import { pairScreen } from './helpers/screens.js';

/** An app with an owner, and the calls plugin tests share. */
async function setup(t: Test) {
  const { app, owner, call } = await signedInApp(t);
  const install = (id: string) => call('POST', `/api/v1/plugins/${id}/install`);
  const uninstall = (id: string, purge = false) => call('DELETE', `/api/v1/plugins/${id}/installation${purge ? '?purge=true' : ''}`);
  const entry = async (id: string) => (await call('GET', '/api/v1/plugins')).body.data.find((p: any) => p.id === id);
  return { app, owner, call, install, uninstall, entry };
}

t.test('the catalog: four built-ins, their needs and JSON Schemas', async (t) => {
  const { call } = await setup(t);
  const res = await call('GET', '/api/v1/plugins');
  t.equal(res.status, 200);
  const list = res.body.data;
  t.same(list.map((p: any) => p.id).sort(), ['brand-bug', 'countdown-bar', 'noise-meter', 'overlay-core']);
  for (const p of list) {
    t.match(p, {
      name: String,
      version: '1.0.0',
      description: String,
      playerFamilies: ['web'],
      installed: false,
      installedAt: null,
      asDependency: false,
      instanceCount: 0,
    });
    if (p.id === 'overlay-core') {
      t.same(p.requires, []);
      t.equal(p.configSchema, null, 'overlay-core has no config');
    } else {
      t.same(p.requires, ['overlay-core']);
      t.equal(p.configSchema.type, 'object', `${p.id}: a JSON Schema`);
    }
  }
  const noise = list.find((p: any) => p.id === 'noise-meter').configSchema;
  t.match(noise.properties.loudLevel, { type: 'number', minimum: 0, maximum: 100, default: 75 });
  t.same(noise.properties.display.enum, ['bar', 'dial', 'traffic-light', 'hidden']);
  const countdown = list.find((p: any) => p.id === 'countdown-bar').configSchema;
  t.ok(countdown.required.includes('target'), 'the countdown target is required');
  t.equal(countdown.properties.target.oneOf.length, 2, 'a moment or a daily time');
  const bug = list.find((p: any) => p.id === 'brand-bug').configSchema;
  t.same(bug.required, ['assetId']);
  t.match(bug.properties.corner, { enum: ['top-left', 'top-right', 'bottom-left', 'bottom-right'], default: 'top-right' });
});

t.test('install with dependencies, uninstall rules, dependency graph', async (t) => {
  const { app, call, install, uninstall, entry } = await setup(t);
  let graph = (await call('GET', '/api/v1/plugins/dependency-graph')).body.data;
  t.same(
    graph.edges.sort((a: any, b: any) => a.from.localeCompare(b.from)),
    [
      { from: 'brand-bug', to: 'overlay-core' },
      { from: 'countdown-bar', to: 'overlay-core' },
      { from: 'noise-meter', to: 'overlay-core' },
    ],
  );
  t.ok(graph.nodes.every((n: any) => n.installed === false));

  const before = Date.now();
  const res = await install('noise-meter');
  const after = Date.now();
  t.equal(res.status, 200, JSON.stringify(res.body));
  t.match(res.body.data, { id: 'noise-meter', installed: true, asDependency: false });
  const at = Date.parse(res.body.data.installedAt);
  t.ok(at >= before - 1000 && at <= after + 1000, 'installedAt is now');
  t.match(await entry('overlay-core'), { installed: true, asDependency: true }, 'its dependency came with it');
  t.equal((await install('noise-meter')).status, 200, 'installing again answers 200 as it is');
  t.equal((await install('noise-meter')).body.data.installedAt, res.body.data.installedAt);
  graph = (await call('GET', '/api/v1/plugins/dependency-graph')).body.data;
  t.same(
    graph.nodes
      .filter((n: any) => n.installed)
      .map((n: any) => n.id)
      .sort(),
    ['noise-meter', 'overlay-core'],
  );

  t.equal((await install('countdown-bar')).status, 200);
  const needed = await uninstall('overlay-core');
  t.equal(needed.status, 409);
  t.equal(needed.body.error.code, 'plugin_required');
  t.same(needed.body.error.details.requiredBy.sort(), ['countdown-bar', 'noise-meter']);
  t.match(needed.body.error.message, /countdown-bar.*noise-meter/);

  t.equal((await uninstall('noise-meter')).status, 204);
  t.equal((await uninstall('countdown-bar')).status, 204);
  t.match(await entry('overlay-core'), { installed: true, asDependency: true }, 'a dependency stays when the last plugin needing it goes');
  t.equal((await uninstall('overlay-core')).status, 204, 'the admin removes it');
  const again = await uninstall('overlay-core');
  t.equal(again.status, 404);
  t.equal(again.body.error.code, 'not_installed');
  const unknown = await install('teleporter');
  t.equal(unknown.status, 404);
  t.equal(unknown.body.error.code, 'plugin_not_found');
  t.equal((await uninstall('teleporter')).body.error.code, 'plugin_not_found');

  // overlay-core asked for by name is no longer only a dependency.
  await install('brand-bug');
  t.match(await entry('overlay-core'), { asDependency: true });
  await install('overlay-core');
  t.match(await entry('overlay-core'), { asDependency: false });

  // Roles: installing is for admins; reading for viewers.
  const editor = await signIn(app, { role: 'editor' });
  const viewer = await signIn(app, { role: 'viewer' });
  t.equal((await app.json('/api/v1/plugins/countdown-bar/install', { method: 'POST', headers: editor.headers })).status, 403);
  t.equal((await app.json('/api/v1/plugins', { headers: viewer.headers })).status, 200);
  t.equal((await app.json('/api/v1/plugins/countdown-bar/instances', { headers: viewer.headers })).status, 200);
});

t.test('instances: CRUD per plugin, defaults, bad configs, If-Match, not-installed writes, uninstall keeps and purge removes', async (t) => {
  const { app, owner, call, install, uninstall, entry } = await setup(t);
  const group = (await call('POST', '/api/v1/screen-groups', { name: 'Class rooms' })).body.data.id as string;
  const screen = await pairScreen(app, owner, { name: 'Room 1' });
  const base = (p: string) => `/api/v1/plugins/${p}/instances`;

  const countdown = { name: 'Lunch', targets: { groupIds: [group] }, config: { target: { type: 'daily', time: '12:30', weekdays: [1, 2, 3, 4, 5] } } };
  let res = await call('POST', base('countdown-bar'), countdown);
  t.equal(res.status, 409, 'not installed: no new instances');
  t.equal(res.body.error.code, 'plugin_not_installed');
  await install('countdown-bar');
  await install('noise-meter');
  await install('brand-bug');

  res = await call('POST', base('countdown-bar'), countdown);
  t.equal(res.status, 201, JSON.stringify(res.body));
  const c = res.body.data;
  t.equal(res.headers.get('etag'), '"1"');
  t.match(c, {
    pluginId: 'countdown-bar',
    name: 'Lunch',
    targets: { groupIds: [group] },
    revision: 1,
    config: {
      target: { type: 'daily', time: '12:30', weekdays: [1, 2, 3, 4, 5] },
      label: '',
      windowMin: 60,
      position: 'bottom',
      heightPct: 6,
      colors: { bar: '#e4572e', background: '#00000099', text: '#ffffff' },
      afterZero: { show: 'hide', text: 'Time!', forMin: 5 },
    },
  });
  t.same((await call('GET', `${base('countdown-bar')}/${c.id}`)).body.data, c);
  t.same(
    (await call('GET', base('countdown-bar'))).body.data.items.map((i: any) => i.id),
    [c.id],
  );
  t.equal((await call('GET', `${base('noise-meter')}/${c.id}`)).status, 404, 'an instance of another plugin is not found');
  t.equal((await entry('countdown-bar')).instanceCount, 1);

  const bad = async (plugin: string, config: unknown, status = 400, targets: unknown = { all: true }) => {
    const r = await call('POST', base(plugin), { name: 'Bad', targets, config });
    t.equal(r.status, status, `${plugin} ${JSON.stringify(config)} -> ${status}: ${JSON.stringify(r.body)}`);
    return r.body.error;
  };
  await bad('noise-meter', { warningLevel: 80, loudLevel: 80 });
  await bad('noise-meter', { warningLevel: 80 }, 400);
  await bad('noise-meter', { display: 'lava-lamp' });
  await bad('noise-meter', { calibrationOffset: 51 });
  await bad('countdown-bar', { target: { type: 'daily', time: '24:00' } });
  await bad('countdown-bar', { target: { type: 'daily', time: '7:5' } });
  await bad('countdown-bar', { target: { type: 'at', at: '2030-01-01T10:00:00' } }, 400);
  await bad('countdown-bar', { target: { type: 'daily', time: '10:00' }, colors: { bar: 'red' } });
  await bad('countdown-bar', { target: { type: 'daily', time: '10:00' }, colors: { text: '#12345' } });
  await bad('countdown-bar', {});
  await bad('brand-bug', { assetId: 'not-a-uuid' });
  t.equal((await bad('brand-bug', { assetId: '0190f0e0-0000-7000-8000-000000000000' }, 404)).code, 'not_found');
  const site = (await call('POST', '/api/v1/assets/websites', { url: 'https://example.org/', name: 'Site' })).body.data.id;
  const notImage = await bad('brand-bug', { assetId: site }, 400);
  t.equal(notImage.code, 'invalid_asset');
  const unknownTarget = await bad('noise-meter', {}, 400, { screenIds: [screen.screenId, '0190f0e0-0000-7000-8000-000000000001'] });
  t.match(unknownTarget.details.issues, [{ path: ['targets', 'screenIds', 1], code: 'invalid_reference' }]);
  await bad('noise-meter', {}, 400, {});

  res = await call('POST', base('noise-meter'), {
    name: 'Room 1 noise',
    targets: { screenIds: [screen.screenId] },
    config: { warningLevel: 50, loudLevel: 70, display: 'dial' },
  });
  t.equal(res.status, 201, JSON.stringify(res.body));
  const n = res.body.data;
  t.match(n.config, {
    warningLevel: 50,
    loudLevel: 70,
    display: 'dial',
    corner: 'bottom-right',
    sizePct: 18,
    calibrationOffset: 0,
    microphone: { deviceLabel: '', echoCancellation: false },
  });

  // PUT: full body, If-Match.
  const put = (id: string, body: unknown, ifMatch?: string) =>
    call('PUT', `${base('noise-meter')}/${id}`, body, ifMatch === undefined ? {} : { 'if-match': ifMatch });
  const edited = { name: 'Room 1 noise', targets: { all: true }, config: { warningLevel: 40, loudLevel: 65 } };
  res = await put(n.id, edited, '"1"');
  t.equal(res.status, 200, JSON.stringify(res.body));
  t.match(res.body.data, { revision: 2, targets: { all: true }, config: { warningLevel: 40, loudLevel: 65, display: 'bar' } });
  t.equal(res.headers.get('etag'), '"2"');
  res = await put(n.id, edited, '"1"');
  t.equal(res.status, 412, 'a stale If-Match');
  t.equal(res.body.error.code, 'version_conflict');
  t.equal((await put(n.id, edited, 'nonsense')).status, 400);
  t.equal((await put(n.id, edited)).status, 200, 'no If-Match: last write wins');
  t.equal((await put(n.id, { ...edited, config: { warningLevel: 90, loudLevel: 10 } })).status, 400);
  t.equal((await put('0190f0e0-0000-7000-8000-000000000002', edited)).status, 404);

  // Roles: editors write, viewers read.
  const viewer = await signIn(app, { role: 'viewer' });
  const editor = await signIn(app, { role: 'editor' });
  t.equal((await app.json(base('noise-meter'), { method: 'POST', headers: viewer.headers, json: edited })).status, 403);
  t.equal((await app.json(base('noise-meter'), { method: 'POST', headers: editor.headers, json: { ...edited, name: 'By editor' } })).status, 201);

  // Uninstall keeps the instances (listable, not editable); reinstall brings them back.
  t.equal((await uninstall('noise-meter')).status, 204);
  const kept = (await call('GET', base('noise-meter'))).body.data.items;
  t.equal(kept.length, 2, 'the instances stay stored');
  res = await put(n.id, edited);
  t.equal(res.status, 409);
  t.equal(res.body.error.code, 'plugin_not_installed');
  t.equal((await call('DELETE', `${base('noise-meter')}/${kept.find((i: any) => i.name === 'By editor').id}`)).status, 204, 'DELETE works while not installed');
  await install('noise-meter');
  t.same(
    (await call('GET', base('noise-meter'))).body.data.items.map((i: any) => i.id),
    [n.id],
  );

  // DELETE with a stale If-Match, then for real.
  t.equal((await call('DELETE', `${base('noise-meter')}/${n.id}`, undefined, { 'if-match': '"1"' })).status, 412);
  t.equal((await call('DELETE', `${base('countdown-bar')}/${c.id}`, undefined, { 'if-match': '"1"' })).status, 204);
  t.equal((await call('GET', `${base('countdown-bar')}/${c.id}`)).status, 404);

  // Purge removes the instances and the noise history.
  const now = Date.now();
  app.database.sqlite
    .prepare(
      'insert into noise_buckets (screen_num, started_ms, average_level, peak_level, monitored_ms, warning_ms, loud_ms, received_ms) values ((select num from screens where id = ?), ?, 50, 60, 10000, 0, 0, ?)',
    )
    .run(screen.screenId, now, now);
  t.equal((await uninstall('noise-meter', true)).status, 204);
  t.same((await call('GET', base('noise-meter'))).body.data.items, [], 'purged');
  t.equal((app.database.sqlite.prepare('select count(*) as n from noise_buckets').get() as { n: number }).n, 0, 'the noise history went too');
});

t.test('a deleted group leaves the instance’s targets', async (t) => {
  const { app, owner, call, install } = await setup(t);
  await install('noise-meter');
  const group = (await call('POST', '/api/v1/screen-groups', { name: 'Temp' })).body.data.id as string;
  const screen = await pairScreen(app, owner, { name: 'Kept' });
  const res = await call('POST', '/api/v1/plugins/noise-meter/instances', {
    name: 'N',
    targets: { groupIds: [group], screenIds: [screen.screenId] },
    config: {},
  });
  t.equal(res.status, 201);
  t.equal((await call('DELETE', `/api/v1/screen-groups/${group}`)).status, 204);
  t.same((await call('GET', `/api/v1/plugins/noise-meter/instances/${res.body.data.id}`)).body.data.targets, { screenIds: [screen.screenId] });
});

t.test('instanceScreenIds and pluginInstalled (for the noise reports): the screens an instance reaches now', async (t) => {
  const { app, owner, call, install } = await setup(t);
  t.equal(await pluginInstalled(app.deps.db, 'noise-meter'), false);
  await install('noise-meter');
  t.equal(await pluginInstalled(app.deps.db, 'noise-meter'), true);
  t.equal(await pluginInstalled(app.deps.db, 'overlay-core'), true);
  const group = (await call('POST', '/api/v1/screen-groups', { name: 'G' })).body.data.id as string;
  const location = (await call('POST', '/api/v1/locations', { name: 'L', timeZone: 'Europe/Berlin' })).body.data.id as string;
  const a = await pairScreen(app, owner, { name: 'A', groupIds: [group] });
  const b = await pairScreen(app, owner, { name: 'B', locationId: location });
  const c = await pairScreen(app, owner, { name: 'C' });
  const make = async (targets: unknown) =>
    (await call('POST', '/api/v1/plugins/noise-meter/instances', { name: 'N', targets, config: {} })).body.data.id as string;
  const db = app.deps.db;
  t.same(await instanceScreenIds(db, await make({ groupIds: [group] }), 'noise-meter'), [a.screenId]);
  t.same(await instanceScreenIds(db, await make({ locationIds: [location], screenIds: [c.screenId] }), 'noise-meter'), [b.screenId, c.screenId].sort());
  const all = await make({ all: true });
  t.same(await instanceScreenIds(db, all, 'noise-meter'), [a.screenId, b.screenId, c.screenId].sort());
  t.equal(await instanceScreenIds(db, all, 'countdown-bar'), null, 'not an instance of that plugin');
  t.equal(await instanceScreenIds(db, '0190f0e0-0000-7000-8000-000000000003', 'noise-meter'), null);

  // The list is paged by name (the collections' convention).
  const first = (await call('GET', '/api/v1/plugins/noise-meter/instances?limit=2')).body.data;
  t.equal(first.items.length, 2);
  t.type(first.nextCursor, 'string');
  const rest = (await call('GET', `/api/v1/plugins/noise-meter/instances?limit=2&cursor=${first.nextCursor}`)).body.data;
  t.equal(rest.items.length, 1);
  t.equal(rest.nextCursor, null);
  const paged = [...first.items, ...rest.items].map((i: any) => i.id);
  t.equal(new Set(paged).size, 3, 'every instance once');
  t.ok(paged.includes(all));
  t.equal((await call('GET', '/api/v1/plugins/noise-meter/instances?cursor=forged')).status, 400);
});
