import t, { type Test } from 'tap';
import { signedInApp, signIn } from './helpers/auth.js';
import { contended, type TestApp } from './helpers/harness.js';

const setup = (t: Test) => signedInApp(t);

async function playlist(call: Awaited<ReturnType<typeof setup>>['call'], name: string) {
  const res = await call('POST', '/api/v1/playlists', { name });
  if (res.status !== 201) throw new Error(JSON.stringify(res.body));
  return res.body.data as { id: string; revision: number };
}

t.test('create, read, list, rename with If-Match, delete', async (t) => {
  const { call } = await setup(t);
  const created = await call('POST', '/api/v1/playlists', { name: 'Lobby', description: 'Front door' });
  t.equal(created.status, 201);
  t.match(created.body.data, { name: 'Lobby', description: 'Front door', revision: 1, items: [], tagRule: null, durationMs: 0 });
  t.equal(created.headers.get('etag'), '"1"');
  const id = created.body.data.id;
  await playlist(call, 'Bar');
  const list = await call('GET', '/api/v1/playlists?limit=1');
  t.equal(list.body.data.items[0].name, 'Bar');
  t.ok(list.body.data.nextCursor);
  const next = await call('GET', `/api/v1/playlists?limit=1&cursor=${list.body.data.nextCursor}`);
  t.equal(next.body.data.items[0].name, 'Lobby');
  t.equal((await call('GET', '/api/v1/playlists?q=LOB')).body.data.items.length, 1);

  const renamed = await call('PATCH', `/api/v1/playlists/${id}`, { name: 'Lobby 2' }, { 'if-match': '"1"' });
  t.equal(renamed.status, 200);
  t.equal(renamed.body.data.revision, 2);
  const stale = await call('PATCH', `/api/v1/playlists/${id}`, { name: 'Lobby 3' }, { 'if-match': '"1"' });
  t.equal(stale.status, 412);
  t.equal(stale.body.error.code, 'version_conflict');
  t.equal((await call('GET', `/api/v1/playlists/${id}`)).body.data.name, 'Lobby 2', 'the stale change was not applied');
  t.equal((await call('PATCH', `/api/v1/playlists/${id}`, { name: 'x' }, { 'if-match': 'garbage' })).status, 400);

  t.equal((await call('DELETE', `/api/v1/playlists/${id}`)).status, 204);
  t.equal((await call('GET', `/api/v1/playlists/${id}`)).status, 404);
  t.equal((await call('GET', '/api/v1/playlists/not-a-uuid')).status, 404);
});

t.test('nested playlists: order, cycles refused, usage blocks delete', async (t) => {
  const { call } = await setup(t);
  const a = await playlist(call, 'A');
  const b = await playlist(call, 'B');
  const c = await playlist(call, 'C');
  const ab = await call('POST', `/api/v1/playlists/${a.id}/items`, { playlistId: b.id });
  t.equal(ab.status, 201);
  t.match(ab.body.data, { type: 'playlist', playlistId: b.id, label: 'B', position: 0 });
  t.equal((await call('POST', `/api/v1/playlists/${b.id}/items`, { playlistId: c.id })).status, 201);
  const cycle = await call('POST', `/api/v1/playlists/${c.id}/items`, { playlistId: a.id });
  t.equal(cycle.status, 409, 'C -> A -> B -> C');
  t.equal(cycle.body.error.code, 'conflict');
  t.equal((await call('POST', `/api/v1/playlists/${a.id}/items`, { playlistId: a.id })).status, 409, 'itself');
  const del = await call('DELETE', `/api/v1/playlists/${b.id}`);
  t.equal(del.status, 409);
  t.same(del.body.error.details.usedBy, [{ type: 'playlist', id: a.id, name: 'A' }]);
  t.match(del.body.error.message, /"A"/);
});

t.test('items: add at a position, patch, reorder, bulk, delete; bad input', async (t) => {
  const { call } = await setup(t);
  const root = await playlist(call, 'Root');
  const kids = [];
  for (const name of ['k1', 'k2', 'k3']) kids.push(await playlist(call, name));
  const ids: string[] = [];
  for (const k of kids) ids.push((await call('POST', `/api/v1/playlists/${root.id}/items`, { playlistId: k.id })).body.data.id);
  const timed = await call('POST', `/api/v1/playlists/${root.id}/items`, { playlistId: kids[2]!.id, position: 0, durationMs: 30000 });
  t.equal(timed.status, 400, 'a nested playlist plays its own length: no durationMs');
  t.match(timed.body.error, { code: 'validation_failed', details: { issues: [{ path: ['durationMs'] }] } });
  const first = await call('POST', `/api/v1/playlists/${root.id}/items`, { playlistId: kids[2]!.id, position: 0, durationMs: null });
  t.equal(first.body.data.position, 0);
  let p = (await call('GET', `/api/v1/playlists/${root.id}`)).body.data;
  t.same(
    p.items.map((i: any) => i.label),
    ['k3', 'k1', 'k2', 'k3'],
  );
  t.equal(p.revision, 5);
  t.equal(p.durationMs, 0, 'empty nested playlists last nothing');

  t.equal((await call('PATCH', `/api/v1/playlists/${root.id}/items/${ids[0]}`, { durationMs: 5000 })).status, 400, 'no durationMs on a nesting item by PATCH');
  const patched = await call('PATCH', `/api/v1/playlists/${root.id}/items/${ids[0]}`, {
    durationMs: null,
    transition: { type: 'fade', durationMs: 800 },
    validFrom: '2026-06-01T00:00:00+02:00',
    dayparts: [{ days: [1, 2, 3, 4, 5], from: '08:00', to: '12:00' }],
  });
  t.equal(patched.status, 200);
  t.match(patched.body.data, { durationMs: null, transition: { type: 'fade', durationMs: 800 }, validFrom: '2026-05-31T22:00:00.000Z' });
  t.equal(patched.headers.get('etag'), '"6"');
  const badRange = await call('PATCH', `/api/v1/playlists/${root.id}/items/${ids[0]}`, { validUntil: '2026-01-01T00:00:00Z' });
  t.equal(badRange.status, 400, 'validUntil before validFrom');
  t.equal((await call('PATCH', `/api/v1/playlists/${root.id}/items/${ids[0]}`, { dayparts: [{ days: [8], from: '25:00', to: '1' }] })).status, 400);

  const order = [first.body.data.id, ...ids].reverse();
  const reordered = await call('PUT', `/api/v1/playlists/${root.id}/items/order`, { itemIds: order });
  t.equal(reordered.status, 200);
  t.same(
    reordered.body.data.items.map((i: any) => i.id),
    order,
  );
  t.equal((await call('PUT', `/api/v1/playlists/${root.id}/items/order`, { itemIds: order.slice(1) })).status, 400, 'must list every item');

  const timedBulk = await call('PUT', `/api/v1/playlists/${root.id}/items/bulk`, { items: [{ id: ids[1], durationMs: 7000 }] });
  t.equal(timedBulk.status, 400, 'nor by bulk');
  t.same(timedBulk.body.error.details.itemIds, [ids[1]]);
  const bulk = await call('PUT', `/api/v1/playlists/${root.id}/items/bulk`, {
    itemIds: ids,
    set: { enabled: false },
    items: [{ id: ids[1], transition: { type: 'slide', durationMs: 300 } }],
    delete: [first.body.data.id],
  });
  t.equal(bulk.status, 200);
  p = bulk.body.data;
  t.equal(p.items.length, 3);
  t.ok(p.items.every((i: any) => i.enabled === false));
  t.same(p.items.find((i: any) => i.id === ids[1]).transition, { type: 'slide', durationMs: 300 });
  t.same(
    p.items.map((i: any) => i.position),
    [0, 1, 2],
  );
  const unknown = await call('PUT', `/api/v1/playlists/${root.id}/items/bulk`, { delete: ['0190f5a2-7b3c-7def-8abc-0123456789ab'] });
  t.equal(unknown.status, 400);
  t.equal((await call('GET', `/api/v1/playlists/${root.id}`)).body.data.items.length, 3, 'nothing changed');

  t.equal((await call('DELETE', `/api/v1/playlists/${root.id}/items/${ids[2]}`)).status, 204);
  t.equal((await call('DELETE', `/api/v1/playlists/${root.id}/items/${ids[2]}`)).status, 404);

  const none = await call('POST', `/api/v1/playlists/${root.id}/items`, {});
  t.equal(none.status, 400);
  const two = await call('POST', `/api/v1/playlists/${root.id}/items`, { playlistId: kids[0]!.id, assetId: kids[1]!.id });
  t.equal(two.status, 400);
  const widget = await call('POST', `/api/v1/playlists/${root.id}/items`, { widgetId: kids[0]!.id });
  t.equal(widget.status, 400, 'a widgetId that names no widget (here a playlist’s id)');
  t.same(
    widget.body.error.details.issues.map((i: any) => [i.code, i.path]),
    [['invalid_reference', ['widgetId']]],
  );
  const missingAsset = await call('POST', `/api/v1/playlists/${root.id}/items`, { assetId: '0190f5a2-7b3c-7def-8abc-0123456789ab' });
  t.equal(missingAsset.status, 400);
});

t.test('tag rule is stored and cleared; viewers read but cannot edit', async (t) => {
  const { app, call } = await setup(t);
  const p = await playlist(call, 'Smart');
  const set = await call('PUT', `/api/v1/playlists/${p.id}/tag-rule`, { tags: ['menu', 'menu', 'promo'], order: 'newest' });
  t.equal(set.status, 200);
  t.same(set.body.data.tagRule, { tags: ['menu', 'promo'], match: 'any', order: 'newest', durationMs: null, limit: null });
  const cleared = await call('PUT', `/api/v1/playlists/${p.id}/tag-rule`, { tags: [] });
  t.equal(cleared.body.data.tagRule, null);
  const viewer = await signIn(app as TestApp, { role: 'viewer' });
  t.equal((await app.json(`/api/v1/playlists/${p.id}`, { headers: viewer.headers })).status, 200);
  t.equal((await app.json(`/api/v1/playlists/${p.id}`, { method: 'PATCH', headers: viewer.headers, json: { name: 'x' } })).status, 403);
});

t.test('If-Match is checked in the write: of concurrent edits with the same revision exactly one wins', async (t) => {
  const { app, call } = await setup(t);
  const p = await playlist(call, 'Race');
  const child = await playlist(call, 'Child');
  const statuses = async (make: () => Promise<{ status: number }>[]) => (await contended(app, make)).map((r) => r.status).sort();
  t.same(
    await statuses(() => [0, 1, 2, 3, 4].map((i) => call('PATCH', `/api/v1/playlists/${p.id}`, { name: `Race ${i}` }, { 'if-match': '"1"' }))),
    [200, 412, 412, 412, 412],
    'PATCH',
  );
  t.equal((await call('GET', `/api/v1/playlists/${p.id}`)).body.data.revision, 2, 'one change, one new revision');
  t.same(
    await statuses(() => [0, 1, 2, 3].map(() => call('POST', `/api/v1/playlists/${p.id}/items`, { playlistId: child.id }, { 'if-match': '2' }))),
    [201, 412, 412, 412],
    'POST items',
  );
  t.equal((await call('GET', `/api/v1/playlists/${p.id}`)).body.data.items.length, 1, 'one item added');

  // Two playlists nesting each other at the same moment: the cycle check runs in the write, so one is refused.
  const a = await playlist(call, 'A');
  const b = await playlist(call, 'B');
  t.same(
    await statuses(() => [
      call('POST', `/api/v1/playlists/${a.id}/items`, { playlistId: b.id }),
      call('POST', `/api/v1/playlists/${b.id}/items`, { playlistId: a.id }),
    ]),
    [201, 409],
    'no cycle from two concurrent requests',
  );
});

t.test('every playlist write refuses a stale If-Match with 412 and changes nothing', async (t) => {
  const { call } = await setup(t);
  const p = await playlist(call, 'Guarded');
  const kids = [await playlist(call, 'k1'), await playlist(call, 'k2')];
  const items: string[] = [];
  for (const k of kids)
    items.push(
      (
        await call(
          'POST',
          `/api/v1/playlists/${p.id}/items`,
          { playlistId: k.id },
          { 'if-match': String((await call('GET', `/api/v1/playlists/${p.id}`)).body.data.revision) },
        )
      ).body.data.id,
    );
  const current = (await call('GET', `/api/v1/playlists/${p.id}`)).body.data;
  t.equal(current.revision, 3);
  const stale = { 'if-match': '"2"' };
  const attempts: [string, string, string, unknown][] = [
    ['POST items', 'POST', `/api/v1/playlists/${p.id}/items`, { playlistId: kids[0]!.id }],
    ['items/order', 'PUT', `/api/v1/playlists/${p.id}/items/order`, { itemIds: [...items].reverse() }],
    ['items/bulk', 'PUT', `/api/v1/playlists/${p.id}/items/bulk`, { delete: [items[0]] }],
    ['tag-rule', 'PUT', `/api/v1/playlists/${p.id}/tag-rule`, { tags: ['menu'] }],
    ['item PATCH', 'PATCH', `/api/v1/playlists/${p.id}/items/${items[0]}`, { enabled: false }],
    ['item DELETE', 'DELETE', `/api/v1/playlists/${p.id}/items/${items[0]}`, undefined],
    ['playlist PATCH', 'PATCH', `/api/v1/playlists/${p.id}`, { name: 'Changed' }],
    ['playlist DELETE', 'DELETE', `/api/v1/playlists/${p.id}`, undefined],
  ];
  for (const [label, method, path, body] of attempts) {
    const res = await call(method, path, body, stale);
    t.equal(res.status, 412, label);
    t.match(res.body.error, { code: 'version_conflict', details: { currentRevision: 3 } }, label);
  }
  t.same((await call('GET', `/api/v1/playlists/${p.id}`)).body.data, current, 'nothing changed');
  t.equal(
    (await call('PATCH', `/api/v1/playlists/${p.id}/items/${items[0]}`, { enabled: false }, { 'if-match': 'W/"3"' })).status,
    200,
    'the current revision (weak form) is accepted',
  );
  t.equal((await call('DELETE', `/api/v1/playlists/${p.id}`, undefined, { 'if-match': '4' })).status, 204);
});

t.test('a bulk edit that fails validation leaves every item as it was', async (t) => {
  const { call } = await setup(t);
  const p = await playlist(call, 'Bulk');
  const k = await playlist(call, 'k');
  const a = (await call('POST', `/api/v1/playlists/${p.id}/items`, { playlistId: k.id, validFrom: '2026-06-01T00:00:00Z' })).body.data.id;
  const b = (await call('POST', `/api/v1/playlists/${p.id}/items`, { playlistId: k.id })).body.data.id;
  const before = (await call('GET', `/api/v1/playlists/${p.id}`)).body.data;
  const res = await call('PUT', `/api/v1/playlists/${p.id}/items/bulk`, {
    itemIds: [a, b],
    set: { enabled: false, transition: { type: 'fade', durationMs: 500 } },
    items: [{ id: a, validUntil: '2026-06-01T00:00:00Z' }], // not after its validFrom
    delete: [b],
  });
  t.equal(res.status, 400);
  t.match(res.body.error, { code: 'validation_failed', message: /validUntil must be after validFrom/ });
  t.same((await call('GET', `/api/v1/playlists/${p.id}`)).body.data, before, 'no item disabled, none deleted, revision unchanged');
  const earlier = await call('PUT', `/api/v1/playlists/${p.id}/items/bulk`, { itemIds: [a], set: { validUntil: '2026-05-01T00:00:00Z' } });
  t.equal(earlier.status, 400, 'a set that ends before an item’s own validFrom is refused too');
});
