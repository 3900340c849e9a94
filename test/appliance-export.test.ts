import t from 'tap';
import { getSettings } from '../server/src/modules/system/settings.js';
import { signIn } from './helpers/auth.js';
import { startApp } from './helpers/harness.js';

const LOC = '0190f5a2-7b3c-7def-8abc-0123456789a1';
const GRP = '0190f5a2-7b3c-7def-8abc-0123456789a2';

t.test('settings export -> preview -> apply on another server, atomic and validated', async (t) => {
  const a = await startApp(t);
  const ownerA = await signIn(a);
  await a.json('/api/v1/settings', { method: 'PATCH', headers: ownerA.headers, json: { serverName: 'Venue A', timeZone: 'Europe/Berlin', approvals: { required: true } } });
  const now = new Date().toISOString();
  await a.deps.db.insertInto('locations').values({ id: LOC, name: 'Lobby', address: '1 Main St', time_zone: 'Europe/Berlin', latitude: 52.5, longitude: 13.4, notes: null, created_at: now, updated_at: now }).execute();
  await a.deps.db.insertInto('screen_groups').values({ id: GRP, name: 'Wall', description: null, policy: JSON.stringify({ volume: 30 }), span: null, created_at: now, updated_at: now }).execute();

  const exported = await a.json('/api/v1/system/settings/export', { headers: ownerA.headers });
  t.equal(exported.status, 200);
  const doc = exported.body.data;
  t.equal(doc.format, 'placard-settings-export');
  t.equal(doc.formatVersion, 1);
  t.equal(doc.sections.settings.data.serverName, 'Venue A');
  t.same(doc.sections.locations.data, [{ id: LOC, name: 'Lobby', address: '1 Main St', timeZone: 'Europe/Berlin', latitude: 52.5, longitude: 13.4, notes: null }]);
  t.same(doc.sections.groups.data, [{ id: GRP, name: 'Wall', description: null, policy: { volume: 30 }, span: null }]);
  const text = JSON.stringify(doc);
  t.notMatch(text, /password|secret|hash|token/i, 'no secrets in the export');

  const b = await startApp(t);
  const ownerB = await signIn(b);
  const viewerB = await signIn(b, { role: 'viewer' });
  t.equal((await b.json('/api/v1/system/settings/import/preview', { method: 'POST', headers: viewerB.headers, json: doc })).status, 403);

  const preview = await b.json('/api/v1/system/settings/import/preview', { method: 'POST', headers: ownerB.headers, json: { ...doc, sections: { ...doc.sections, plugins: { version: 1, data: {} } } } });
  t.equal(preview.status, 200, JSON.stringify(preview.body));
  const byKey = Object.fromEntries(preview.body.data.sections.map((s: { key: string }) => [s.key, s]));
  t.equal(byKey.locations.summary.create, 1);
  t.equal(byKey.groups.summary.create, 1);
  t.ok(byKey.settings.changes.some((c: { name: string; action: string }) => c.name === 'serverName' && c.action === 'update'));
  t.same(preview.body.data.ignored, [{ key: 'plugins', reason: 'this server has no such section' }]);
  t.equal((await getSettings(b.deps.db)).serverName, 'Placard', 'preview changes nothing');
  t.equal((await b.deps.db.selectFrom('locations').selectAll().execute()).length, 0);

  // A bad location makes the whole import fail: the settings in the same document are not applied either.
  const broken = structuredClone(doc);
  broken.sections.locations.data.push({ id: '0190f5a2-7b3c-7def-8abc-0123456789a3', name: 'Roof', timeZone: 'Mars/Base' });
  const refused = await b.json('/api/v1/system/settings/import/apply', { method: 'POST', headers: ownerB.headers, json: broken });
  t.equal(refused.status, 400);
  t.equal(refused.body.error.code, 'validation_failed');
  t.match(refused.body.error.message, /locations/);
  t.equal((await getSettings(b.deps.db)).serverName, 'Placard', 'nothing applied');

  for (const [label, bad] of [
    ['newer format', { ...doc, formatVersion: 99 }],
    ['newer section', { ...doc, sections: { ...doc.sections, settings: { version: 7, data: {} } } }],
    ['not an export', { format: 'something-else', formatVersion: 1, sections: {} }],
    ['duplicate ids', { ...doc, sections: { locations: { version: 1, data: [doc.sections.locations.data[0], doc.sections.locations.data[0]] } } }],
    ['bad settings', { ...doc, sections: { settings: { version: 1, data: { uploads: { maxSizeBytes: -1 } } } } }],
  ] as const) {
    const res = await b.json('/api/v1/system/settings/import/apply', { method: 'POST', headers: ownerB.headers, json: bad });
    t.equal(res.status, 400, `${label}: ${JSON.stringify(res.body)}`);
  }

  const applied = await b.json('/api/v1/system/settings/import/apply', { method: 'POST', headers: ownerB.headers, json: doc });
  t.equal(applied.status, 200, JSON.stringify(applied.body));
  t.equal(applied.body.data.applied, true);
  const again = await b.json('/api/v1/system/settings/export', { headers: ownerB.headers });
  t.same(again.body.data.sections.settings.data, doc.sections.settings.data, 'settings identical');
  t.same(again.body.data.sections.locations.data, doc.sections.locations.data, 'locations identical');
  t.same(again.body.data.sections.groups.data, doc.sections.groups.data, 'groups identical');

  const second = await b.json('/api/v1/system/settings/import/preview', { method: 'POST', headers: ownerB.headers, json: doc });
  const all = second.body.data.sections.flatMap((s: { changes: { action: string }[] }) => s.changes);
  t.ok(all.every((c: { action: string }) => c.action === 'unchanged'), 'importing the same document again changes nothing');
});
