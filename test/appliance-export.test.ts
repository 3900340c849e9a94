import t from 'tap';
import { getSettings } from '../server/src/modules/system/settings.js';
import { signIn } from './helpers/auth.js';
import { startApp, type TestApp } from './helpers/harness.js';
import { pairScreen } from './helpers/screens.js';

const LOC = '0190f5a2-7b3c-7def-8abc-0123456789a1';
const GRP = '0190f5a2-7b3c-7def-8abc-0123456789a2';

t.test('settings export -> preview -> apply on another server, atomic and validated', async (t) => {
  const a = await startApp(t);
  const ownerA = await signIn(a);
  await a.json('/api/v1/settings', {
    method: 'PATCH',
    headers: ownerA.headers,
    json: { serverName: 'Venue A', timeZone: 'Europe/Berlin', approvals: { required: true } },
  });
  const now = new Date().toISOString();
  await a.deps.db
    .insertInto('locations')
    .values({
      id: LOC,
      name: 'Lobby',
      address: '1 Main St',
      time_zone: 'Europe/Berlin',
      latitude: 52.5,
      longitude: 13.4,
      notes: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  await a.deps.db
    .insertInto('screen_groups')
    .values({ id: GRP, name: 'Wall', description: null, policy: JSON.stringify({ volumePercent: 30 }), span: null, created_at: now, updated_at: now })
    .execute();

  const exported = await a.json('/api/v1/system/settings/export', { headers: ownerA.headers });
  t.equal(exported.status, 200);
  const doc = exported.body.data;
  t.equal(doc.format, 'placard-settings-export');
  t.equal(doc.formatVersion, 1);
  t.equal(doc.sections.settings.data.serverName, 'Venue A');
  t.same(doc.sections.locations.data, [
    { id: LOC, name: 'Lobby', address: '1 Main St', timeZone: 'Europe/Berlin', latitude: 52.5, longitude: 13.4, notes: null },
  ]);
  t.same(doc.sections.groups.data, [{ id: GRP, name: 'Wall', description: null, policy: { volumePercent: 30 }, span: null }]);
  const text = JSON.stringify(doc);
  t.notMatch(text, /password|secret|hash|token/i, 'no secrets in the export');

  const b = await startApp(t);
  const ownerB = await signIn(b);
  const viewerB = await signIn(b, { role: 'viewer' });
  t.equal((await b.json('/api/v1/system/settings/import/preview', { method: 'POST', headers: viewerB.headers, json: doc })).status, 403);

  const preview = await b.json('/api/v1/system/settings/import/preview', {
    method: 'POST',
    headers: ownerB.headers,
    json: { ...doc, sections: { ...doc.sections, plugins: { version: 1, data: {} } } },
  });
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
  t.ok(
    all.every((c: { action: string }) => c.action === 'unchanged'),
    'importing the same document again changes nothing',
  );
});

const revisions = async (app: TestApp, ids: string[]) =>
  Object.fromEntries(
    (await app.deps.db.selectFrom('screens').select(['id', 'manifest_revision']).where('id', 'in', ids).execute()).map((r) => [r.id, r.manifest_revision]),
  );

t.test('import validates group policies and spans as the screens module does, and re-times member screens', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const group = { id: GRP, name: 'Wall', description: null, policy: { volumePercent: 30 }, span: null };
  const location = { id: LOC, name: 'Lobby', address: null, timeZone: 'Europe/Berlin', latitude: null, longitude: null, notes: null };
  const doc = (groups: unknown[], locations: unknown[] = [location]) => ({
    format: 'placard-settings-export',
    formatVersion: 1,
    sections: { locations: { version: 1, data: locations }, groups: { version: 1, data: groups } },
  });
  const preview = (d: unknown) => app.json('/api/v1/system/settings/import/preview', { method: 'POST', headers: owner.headers, json: d });
  const apply = (d: unknown) => app.json('/api/v1/system/settings/import/apply', { method: 'POST', headers: owner.headers, json: d });

  // Policies are PolicyDocuments: an unknown key or a bad value is refused at preview.
  for (const [label, policy, where] of [
    ['unknown key', { volume: 30 }, /groups at 0\.policy/],
    ['out of range', { volumePercent: 130 }, /groups at 0\.policy\.volumePercent/],
    ['not an object', 'loud', /groups at 0\.policy/],
  ] as const) {
    const res = await preview(doc([{ ...group, policy }]));
    t.equal(res.status, 400, `${label}: ${JSON.stringify(res.body)}`);
    t.equal(res.body.error.code, 'validation_failed');
    t.match(res.body.error.message, where, label);
  }
  t.equal(
    (await apply(doc([{ ...group, span: { rows: 0, columns: 1, panel: { widthPx: 1, heightPx: 1 }, cells: [] } }]))).status,
    400,
    'a span that is no Span',
  );

  const first = await apply(doc([group]));
  t.equal(first.status, 200, JSON.stringify(first.body));
  const member = await pairScreen(app, owner, { name: 'Member', locationId: LOC, groupIds: [GRP] });
  const other = await pairScreen(app, owner, { name: 'Elsewhere' });
  const before = await revisions(app, [member.screenId, other.screenId]);

  // Span cells must name this server's screens, members of the group here.
  const span = (screenId: string) => ({ rows: 1, columns: 2, panel: { widthPx: 1920, heightPx: 1080 }, cells: [{ screenId, row: 0, column: 0 }] });
  const unknown = await preview(doc([{ ...group, span: span('0190f5a2-7b3c-7def-8abc-0123456789ff') }]));
  t.equal(unknown.status, 400);
  t.match(unknown.body.error.message, /groups at 0\.span\.cells\.0\.screenId: screen .* is not a screen of this server/);
  const notMember = await preview(doc([{ ...group, span: span(other.screenId) }]));
  t.equal(notMember.status, 400);
  t.match(notMember.body.error.message, /is not a member of group Wall here/);
  const outside = await preview(doc([{ ...group, span: { ...span(member.screenId), cells: [{ screenId: member.screenId, row: 0, column: 5 }] } }]));
  t.equal(outside.status, 400);
  t.match(outside.body.error.message, /outside a 1×2 grid/);
  t.same(await revisions(app, [member.screenId, other.screenId]), before, 'refused imports change no manifest');

  // The same document again changes nothing and bumps nothing.
  const same = await apply(doc([group]));
  t.ok(same.body.data.sections.every((s: { summary: { update: number } }) => s.summary.update === 0));
  t.same(await revisions(app, [member.screenId, other.screenId]), before, 'an unchanged import bumps nothing');

  // A new policy: the member's manifest changes (it carries the effective policy).
  const policy = await apply(doc([{ ...group, policy: { volumePercent: 55 } }]));
  t.equal(policy.status, 200, JSON.stringify(policy.body));
  const afterPolicy = await revisions(app, [member.screenId, other.screenId]);
  t.ok(afterPolicy[member.screenId]! > before[member.screenId]!, 'the member screen’s manifest revision went up');
  t.equal(afterPolicy[other.screenId], before[other.screenId], 'a screen outside the group is left alone');
  const effective = await app.json(`/api/v1/screens/${member.screenId}/effective-policy`, { headers: owner.headers });
  t.equal(effective.status, 200);
  t.equal(effective.body.data.values.volumePercent, 55, 'the member plays with the imported policy');

  // A valid span and a new location time zone.
  const wall = await apply(doc([{ ...group, policy: { volumePercent: 55 }, span: span(member.screenId) }], [{ ...location, timeZone: 'Europe/Paris' }]));
  t.equal(wall.status, 200, JSON.stringify(wall.body));
  const afterWall = await revisions(app, [member.screenId, other.screenId]);
  t.ok(afterWall[member.screenId]! > afterPolicy[member.screenId]!, 'span and time zone re-time the member');
  t.equal(afterWall[other.screenId], before[other.screenId]);
  const tzOnly = await apply(doc([{ ...group, policy: { volumePercent: 55 }, span: span(member.screenId) }], [{ ...location, timeZone: 'Asia/Tokyo' }]));
  t.equal(tzOnly.status, 200);
  t.ok((await revisions(app, [member.screenId]))[member.screenId]! > afterWall[member.screenId]!, 'a location’s new time zone alone bumps its screens');
});
