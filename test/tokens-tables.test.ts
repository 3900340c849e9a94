import t from 'tap';
import { z } from 'zod';
import { tokenMayWriteTable } from '../server/src/modules/accounts/index.js';
import type { Principal } from '../server/src/platform/http/auth.js';
import { defineRoute, ok } from '../server/src/platform/http/route.js';
import { signIn } from './helpers/auth.js';
import { createSource } from './helpers/data-sources.js';
import { startApp } from './helpers/harness.js';

const UNKNOWN = '0190f5a2-7b3c-7def-8abc-0123456789ab';
const FIELDS = [{ key: 'dish', label: 'Dish', type: 'text', required: true }];

t.test('integration tokens are granted manual tables; the principal carries them; tokenMayWriteTable answers per table', async (t) => {
  // A probe of what the authenticated token carries (the records routes read the same).
  const seen: Principal[] = [];
  const probe = defineRoute({
    method: 'GET',
    path: '/api/v1/test-token-tables',
    auth: 'integration:manual_table_rows:write',
    tags: ['Test'],
    summary: 'probe',
    responses: { 200: { description: 'granted ids', data: z.object({ dataSourceIds: z.array(z.string()) }) } },
    handler: (_ctx, { auth }) => {
      seen.push(auth);
      return ok({ dataSourceIds: auth.kind === 'integration' ? [...auth.dataSourceIds] : [] });
    },
  });
  const app = await startApp(t, { extraRoutes: [probe] });
  const owner = await signIn(app);
  const makeForm = async (name: string) => {
    const res = await app.json('/api/v1/forms', { method: 'POST', headers: owner.headers, json: { name, fields: FIELDS } });
    t.equal(res.status, 201, name);
    return res.body.data.sourceId as string;
  };
  const specials = await makeForm('Specials');
  const rooms = await makeForm('Rooms');
  const feed = await createSource(app, owner, { name: 'Feed', provider: 'json', config: { url: 'https://example.com/feed.json' } });
  t.equal(feed.status, 201, 'a json source');
  const feedId: string = feed.body.data.id;

  const makeToken = (json: Record<string, unknown>) => app.json('/api/v1/integration-tokens', { method: 'POST', headers: owner.headers, json });

  // Refusals: each names the field and the index.
  let res = await makeToken({ name: 'Unknown', capabilities: ['manual_table_rows:write'], dataSourceIds: [specials, UNKNOWN] });
  t.equal(res.status, 400);
  t.equal(res.body.error.code, 'validation_failed');
  t.same(res.body.error.details.issues[0].path, ['dataSourceIds', 1], 'the unknown id, by its index');
  t.match(res.body.error.message, /dataSourceIds\.1/);
  res = await makeToken({ name: 'Feed', capabilities: ['manual_table_rows:write'], dataSourceIds: [feedId] });
  t.equal(res.status, 400, 'a source that is not a manual table');
  t.same(res.body.error.details.issues[0].path, ['dataSourceIds', 0]);
  t.match(res.body.error.details.issues[0].message, /manual table/);
  res = await makeToken({ name: 'Dup', capabilities: ['manual_table_rows:write'], dataSourceIds: [specials, specials] });
  t.equal(res.status, 400, 'duplicates');
  res = await makeToken({ name: 'Junk', capabilities: ['manual_table_rows:write'], dataSourceIds: ['not-a-uuid'] });
  t.equal(res.status, 400, 'not an id');
  t.same(res.body.error.details.issues[0].path, ['dataSourceIds', 0]);
  res = await makeToken({ name: 'Fleet', capabilities: ['fleet_health:read'], dataSourceIds: [specials] });
  t.equal(res.status, 400, 'tables only for a token that writes rows');
  t.same(res.body.error.details.issues[0].path, ['dataSourceIds']);
  t.equal((await app.deps.db.selectFrom('integration_tokens').select('id').execute()).length, 0, 'no token was made by a refused request');

  // Granted: the answer, the list and the principal show the tables.
  res = await makeToken({ name: 'Kitchen', capabilities: ['manual_table_rows:write'], dataSourceIds: [specials.toUpperCase()] });
  t.equal(res.status, 201, 'granted a table');
  t.same(res.body.data.dataSourceIds, [specials], 'ids are kept lower-cased');
  const kitchen = res.body.data;
  const plain = (await makeToken({ name: 'Plain', capabilities: ['manual_table_rows:write'] })).body.data;
  t.same(plain.dataSourceIds, [], 'no grants by default');
  const fleet = (await makeToken({ name: 'Fleet', capabilities: ['fleet_health:read', 'manual_table_rows:write'], dataSourceIds: [rooms] })).body.data;

  const list = await app.json('/api/v1/integration-tokens', { headers: owner.headers });
  const byName = new Map(list.body.data.items.map((i: { name: string; dataSourceIds: string[] }) => [i.name, i.dataSourceIds]));
  t.same(byName.get('Kitchen'), [specials]);
  t.same(byName.get('Plain'), []);
  t.same(byName.get('Fleet'), [rooms]);

  res = await app.json('/api/v1/test-token-tables', { headers: { authorization: `Bearer ${kitchen.token}` } });
  t.same(res.body.data.dataSourceIds, [specials], 'the authenticated principal carries its grants');

  const principal = seen[0]!;
  t.equal(await tokenMayWriteTable(app.deps.db, principal, specials), true, 'granted table');
  t.equal(await tokenMayWriteTable(app.deps.db, principal, rooms), false, 'a table it was not granted');
  t.equal(await tokenMayWriteTable(app.deps.db, principal, feedId), false);
  t.equal(
    await tokenMayWriteTable(app.deps.db, { kind: 'integration', tokenId: plain.id, capabilities: ['manual_table_rows:write'], dataSourceIds: [] }, specials),
    false,
  );
  t.equal(
    await tokenMayWriteTable(app.deps.db, { kind: 'integration', tokenId: fleet.id, capabilities: ['fleet_health:read'], dataSourceIds: [rooms] }, rooms),
    true,
    'read from the token as stored',
  );
  t.equal(
    await tokenMayWriteTable(app.deps.db, { kind: 'session', userId: owner.user.id, role: 'owner', sessionId: 's' }, specials),
    false,
    'not for sessions',
  );
  t.equal(
    await tokenMayWriteTable(
      app.deps.db,
      { kind: 'integration', tokenId: UNKNOWN, capabilities: ['manual_table_rows:write'], dataSourceIds: [specials] },
      specials,
    ),
    false,
    'a principal naming no token: the stored token decides, not the principal',
  );

  // Revoked: nothing any more.
  t.equal((await app.json(`/api/v1/integration-tokens/${kitchen.id}/revoke`, { method: 'POST', headers: owner.headers })).status, 200);
  t.equal(await tokenMayWriteTable(app.deps.db, principal, specials), false, 'a revoked token writes nothing');
});
