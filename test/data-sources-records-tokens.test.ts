import t from 'tap';
import { signIn, type SignedIn } from './helpers/auth.js';
import { startApp, type TestApp } from './helpers/harness.js';

const FIELDS = [
  { key: 'dish', label: 'Dish', type: 'text', required: true },
  { key: 'price', label: 'Price', type: 'money', currency: 'EUR', validation: { min: 0 } },
];

async function makeTable(app: TestApp, who: SignedIn, name: string): Promise<string> {
  const res = await app.json('/api/v1/forms', { method: 'POST', headers: who.headers, json: { name, fields: FIELDS } });
  if (res.status !== 201) throw new Error(`form: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.sourceId;
}

const records = (id: string, tail = '') => `/api/v1/data-sources/${id}/records${tail}`;

t.test('integration tokens write records of the tables they were granted, as an editor would, and nothing else', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const specials = await makeTable(app, owner, 'Specials');
  const rooms = await makeTable(app, owner, 'Rooms');
  const made = await app.json('/api/v1/integration-tokens', {
    method: 'POST',
    headers: owner.headers,
    json: { name: 'Till', capabilities: ['manual_table_rows:write'], dataSourceIds: [specials] },
  });
  t.equal(made.status, 201);
  const bearer = { authorization: `Bearer ${made.body.data.token}` };
  const tokenId: string = made.body.data.id;
  const fleet = await app.json('/api/v1/integration-tokens', {
    method: 'POST',
    headers: owner.headers,
    json: { name: 'Fleet', capabilities: ['fleet_health:read'] },
  });
  const fleetBearer = { authorization: `Bearer ${fleet.body.data.token}` };

  // A granted table: the record enters the workflow in its initial state, attributed to the token.
  let res = await app.json(records(specials), { method: 'POST', headers: bearer, json: { values: { dish: 'Soup', price: 4 } } });
  t.equal(res.status, 201, 'the token writes a granted table');
  t.match(res.body.data, { state: 'draft', live: false, createdBy: null, createdByToken: tokenId });
  const rec = res.body.data;
  res = await app.json(records(specials), { method: 'POST', headers: bearer, json: { values: { dish: '', price: -1 } } });
  t.equal(res.status, 400, 'its values are checked like anyone’s');
  t.same(res.body.error.details.issues.map((i: { path: string[] }) => i.path.join('.')).sort(), ['values.dish', 'values.price']);

  // Not granted, or the wrong capability: refused, nothing written.
  res = await app.json(records(rooms), { method: 'POST', headers: bearer, json: { values: { dish: 'Tea' } } });
  t.equal(res.status, 403, 'a table not granted');
  t.equal(res.body.error.code, 'forbidden');
  t.match(res.body.error.message, rooms);
  res = await app.json(records(specials), { method: 'POST', headers: fleetBearer, json: { values: { dish: 'Tea' } } });
  t.equal(res.status, 403, 'a token without manual_table_rows:write');
  t.equal((await app.deps.db.selectFrom('data_source_rows').select('id').where('source_id', '=', rooms).execute()).length, 0);

  // Update with If-Match; the edit is the token's in the audit trail.
  res = await app.json(records(specials, `/${rec.id}`), { method: 'PATCH', headers: { ...bearer, 'if-match': '"7"' }, json: { values: { price: 5 } } });
  t.equal(res.status, 412, 'a stale If-Match');
  res = await app.json(records(specials, `/${rec.id}`), { method: 'PATCH', headers: { ...bearer, 'if-match': '"1"' }, json: { values: { price: 5 } } });
  t.equal(res.status, 200);
  t.equal(res.body.data.values.price, 5);

  // Transitions: what an editor of the table may take (submit), not what needs a publisher (approve).
  res = await app.json(records(specials, `/${rec.id}/transitions`), { method: 'POST', headers: bearer, json: { transition: 'submit' } });
  t.equal(res.status, 200, 'the token submits, as an editor would');
  t.equal(res.body.data.state, 'submitted');
  res = await app.json(records(specials, `/${rec.id}/transitions`), { method: 'POST', headers: bearer, json: { transition: 'approve' } });
  t.equal(res.status, 403, 'the token does not approve');

  // And nothing else: reading, deleting, other routes.
  t.equal((await app.json(records(specials), { headers: bearer })).status, 401, 'reading records needs a console session');
  t.equal((await app.fetch(records(specials, `/${rec.id}`), { method: 'DELETE', headers: bearer })).status, 401, 'deleting needs a console session');
  t.equal((await app.json('/api/v1/data-sources', { headers: bearer })).status, 401);

  const detail = await app.json(records(specials, `/${rec.id}`), { headers: owner.headers });
  const trail = detail.body.data.history.map((e: { kind: string; tokenId: string | null; userId: string | null }) => [e.kind, e.tokenId, e.userId]);
  t.same(trail, [
    ['created', tokenId, null],
    ['updated', tokenId, null],
    ['transition', tokenId, null],
  ]);
  // The approver sees it waiting.
  const inbox = await app.json('/api/v1/approvals', { headers: owner.headers });
  t.same(
    inbox.body.data.items.map((i: { record: { id: string } }) => i.record.id),
    [rec.id],
  );

  // A revoked token writes nothing.
  t.equal((await app.json(`/api/v1/integration-tokens/${tokenId}/revoke`, { method: 'POST', headers: owner.headers })).status, 200);
  res = await app.json(records(specials), { method: 'POST', headers: bearer, json: { values: { dish: 'Late' } } });
  t.equal(res.status, 401, 'revoked');
});

t.test('Idempotency-Key on POST records: a retried POST makes one record and answers the same', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const id = await makeTable(app, owner, 'Specials');
  const made = await app.json('/api/v1/integration-tokens', {
    method: 'POST',
    headers: owner.headers,
    json: { name: 'Till', capabilities: ['manual_table_rows:write'], dataSourceIds: [id] },
  });
  const bearer = { authorization: `Bearer ${made.body.data.token}` };
  const send = (key: string | null, dish: string, headers: Record<string, string> = bearer) =>
    app.json(records(id), { method: 'POST', headers: { ...headers, ...(key ? { 'idempotency-key': key } : {}) }, json: { values: { dish } } });

  const first = await send('till-42', 'Soup');
  t.equal(first.status, 201);
  const again = await send('till-42', 'Soup');
  t.equal(again.status, 201, 'the retry answers as the first did');
  t.equal(again.headers.get('idempotency-replayed'), 'true');
  t.equal(again.body.data.id, first.body.data.id, 'the same record');
  const other = await send('till-42', 'Pie');
  t.equal(other.status, 422, 'the same key with another body');
  t.equal(other.body.error.code, 'idempotency_key_reused');
  // Keys are per caller: the owner's session with the same key makes its own record.
  const mine = await send('till-42', 'Soup', owner.headers);
  t.equal(mine.status, 201);
  t.not(mine.body.data.id, first.body.data.id);
  t.equal((await send(null, 'Soup')).status, 201, 'without a key, a second POST is a second record');
  const rows = await app.deps.db.selectFrom('data_source_rows').select('values').where('source_id', '=', id).execute();
  t.equal(rows.length, 3, 'three records: the replay and the refused reuse wrote nothing');
});
