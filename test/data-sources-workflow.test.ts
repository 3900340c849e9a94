import t from 'tap';
import { signIn, type SignedIn } from './helpers/auth.js';
import { contended, startApp, type TestApp } from './helpers/harness.js';

const FIELDS = [
  { key: 'dish', label: 'Dish', type: 'text', required: true },
  { key: 'price', label: 'Price', type: 'money', currency: 'EUR' },
];

const recordsUrl = (id: string, tail = '') => `/api/v1/data-sources/${id}/records${tail}`;

async function makeTable(app: TestApp, who: SignedIn, workflow?: unknown): Promise<string> {
  const res = await app.json('/api/v1/forms', {
    method: 'POST',
    headers: who.headers,
    json: { name: `Specials ${Math.random()}`, fields: FIELDS, ...(workflow ? { workflow } : {}) },
  });
  if (res.status !== 201) throw new Error(`form: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.sourceId;
}

async function add(app: TestApp, who: SignedIn, id: string, dish: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await app.json(recordsUrl(id), { method: 'POST', headers: who.headers, json: { values: { dish, price: 5 }, ...extra } });
  if (res.status !== 201) throw new Error(`record: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.id;
}

function take(app: TestApp, who: SignedIn, id: string, recordId: string, transition: string, comment?: string) {
  return app.json(recordsUrl(id, `/${recordId}/transitions`), {
    method: 'POST',
    headers: who.headers,
    json: { transition, ...(comment !== undefined ? { comment } : {}) },
  });
}

/** The dishes the table's output shows now (its snapshot through an empty view). */
async function onScreens(app: TestApp, who: SignedIn, id: string): Promise<string[]> {
  const res = await app.json(`/api/v1/data-sources/${id}/views/preview`, { method: 'POST', headers: who.headers, json: {} });
  if (res.status !== 200) throw new Error(`preview: ${res.status}`);
  return res.body.data.rows.map((r: { dish: string }) => r.dish);
}

t.test('default workflow: who, from where, comments; approved + published reaches the output, rejected never does', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const editor = await signIn(app, { role: 'editor' });
  const publisher = await signIn(app, { role: 'publisher' });
  const viewer = await signIn(app, { role: 'viewer' });
  const id = await makeTable(app, owner);
  const special = await add(app, editor, id, 'Soup');

  const early = await take(app, publisher, id, special, 'approve');
  t.equal(early.status, 409, 'approve does not leave draft');
  t.equal(early.body.error.code, 'conflict');
  t.same(early.body.error.details.allowed, ['submit', 'archive']);
  t.match(early.body.error.message, /submit, archive/);
  const unknown = await take(app, editor, id, special, 'teleport');
  t.equal(unknown.status, 400);
  t.same(unknown.body.error.details.issues[0].path, ['transition']);
  t.equal((await take(app, viewer, id, special, 'submit')).status, 403, 'a viewer is not among submit’s who (editor grants)');

  const submitted = await take(app, editor, id, special, 'submit');
  t.equal(submitted.status, 200);
  t.match(submitted.body.data, { state: 'submitted', revision: 2, live: false });
  t.equal(submitted.headers.get('etag'), '"2"');
  const selfApprove = await take(app, editor, id, special, 'approve');
  t.equal(selfApprove.status, 403, 'editors do not approve');
  t.equal(selfApprove.body.error.code, 'forbidden');
  const approved = await take(app, publisher, id, special, 'approve', 'Looks good');
  t.equal(approved.status, 200);
  t.equal(approved.body.data.state, 'approved');
  t.same(await onScreens(app, owner, id), [], 'approved is not yet on screens');
  const stale = await app.json(recordsUrl(id, `/${special}/transitions`), {
    method: 'POST',
    headers: { ...publisher.headers, 'if-match': '"2"' },
    json: { transition: 'publish' },
  });
  t.equal(stale.status, 412, 'If-Match on a transition');
  const published = await take(app, publisher, id, special, 'publish');
  t.equal(published.status, 200);
  t.match(published.body.data, { state: 'published', live: true, revision: 4 });
  t.same(await onScreens(app, owner, id), ['Soup'], 'the published record reaches the output');

  // A rejected one: comment required, never on screens.
  const other = await add(app, editor, id, 'Mystery stew');
  await take(app, editor, id, other, 'submit');
  const bare = await take(app, publisher, id, other, 'reject');
  t.equal(bare.status, 400, 'reject needs a comment');
  t.same(bare.body.error.details.issues[0].path, ['comment']);
  t.equal((await take(app, publisher, id, other, 'reject', '   ')).status, 400, 'blank is no comment');
  const rejected = await take(app, publisher, id, other, 'reject', 'Nobody knows what is in it');
  t.equal(rejected.status, 200);
  t.equal(rejected.body.data.state, 'rejected');
  t.equal((await take(app, publisher, id, other, 'publish')).status, 409, 'a rejected record cannot be published');
  t.same(await onScreens(app, owner, id), ['Soup'], 'the rejected one never reaches the output');

  const detail = (await app.json(recordsUrl(id, `/${special}`), { headers: viewer.headers })).body.data;
  t.same(
    detail.history.map((e: { kind: string; data: { transition?: string } }) => `${e.kind}:${e.data.transition ?? ''}`),
    ['created:', 'transition:submit', 'transition:approve', 'transition:publish'],
  );
  t.match(detail.history[2], { userId: publisher.user.id, data: { from: 'submitted', to: 'approved', comment: 'Looks good' } });
  const stew = (await app.json(recordsUrl(id, `/${other}`), { headers: viewer.headers })).body.data;
  t.match(stew.history.at(-1), { kind: 'transition', data: { transition: 'reject', comment: 'Nobody knows what is in it' } });

  // Editing a published record: an editor's edit sends it back to draft (off screens); a publisher's keeps it published.
  const byPublisher = await app.json(recordsUrl(id, `/${special}`), {
    method: 'PATCH',
    headers: publisher.headers,
    json: { values: { dish: 'Soup of the day' } },
  });
  t.match(byPublisher.body.data, { state: 'published', live: true });
  t.same(await onScreens(app, owner, id), ['Soup of the day'], 'the output follows the publisher’s edit');
  const byEditor = await app.json(recordsUrl(id, `/${special}`), { method: 'PATCH', headers: editor.headers, json: { values: { price: 1 } } });
  t.match(byEditor.body.data, { state: 'draft', live: false });
  t.same(await onScreens(app, owner, id), [], 'back to draft: off the screens');
  const trail = (await app.json(recordsUrl(id, `/${special}`), { headers: viewer.headers })).body.data.history.at(-1);
  t.same(trail.data.state, { from: 'published', to: 'draft' });
});

t.test('N approvers: each distinct person counts once, the Nth moves the record; named approvers and grants', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const editor = await signIn(app, { role: 'editor' });
  const p1 = await signIn(app, { role: 'publisher' });
  const p2 = await signIn(app, { role: 'publisher' });
  const chef = await signIn(app, { role: 'viewer' });
  const workflow = {
    states: ['draft', 'submitted', 'approved', 'published'],
    initial: 'draft',
    transitions: [
      { name: 'submit', from: 'draft', to: 'submitted', who: { grants: ['editor', 'owner'] } },
      { name: 'approve', from: 'submitted', to: 'approved', who: { roles: ['publisher'] }, approvals: 2 },
      { name: 'publish', from: 'approved', to: 'published', who: { userIds: [chef.user.id] } },
    ],
  };
  const id = await makeTable(app, owner, workflow);
  const rec = await add(app, editor, id, 'Pie');
  await take(app, editor, id, rec, 'submit');

  const first = await take(app, p1, id, rec, 'approve', 'one');
  t.equal(first.status, 200);
  t.match(first.body.data, { state: 'submitted', revision: 3 });
  t.same(first.body.data.pendingApprovals, [{ transition: 'approve', userIds: [p1.user.id], needed: 2 }]);
  const again = await take(app, p1, id, rec, 'approve');
  t.equal(again.status, 409, 'the same person twice');
  t.match(again.body.error.message, /already approved/);
  t.equal((await take(app, owner, id, rec, 'approve')).status, 403, 'the owner role is not named');
  const second = await take(app, p2, id, rec, 'approve', 'two');
  t.equal(second.status, 200);
  t.equal(second.body.data.state, 'approved');
  t.equal(second.body.data.pendingApprovals, undefined, 'approvals cleared when it moves');
  const history = (await app.json(recordsUrl(id, `/${rec}`), { headers: owner.headers })).body.data.history;
  t.same(
    history.slice(2).map((e: { kind: string }) => e.kind),
    ['approval', 'transition'],
  );
  t.same(history.at(-1).data.approvedBy, [p1.user.id, p2.user.id]);
  t.match(history[2].data, { transition: 'approve', comment: 'one', count: 1, needed: 2 });

  t.equal((await take(app, p1, id, rec, 'publish')).status, 403, 'only the named chef publishes');
  const done = await take(app, chef, id, rec, 'publish');
  t.equal(done.status, 200, 'a viewer by role, named in who');
  t.same(await onScreens(app, owner, id), ['Pie']);
  // The editor's edit: nobody publishes alone here but the chef, so it goes back to draft.
  const edit = await app.json(recordsUrl(id, `/${rec}`), { method: 'PATCH', headers: editor.headers, json: { values: { price: 7 } } });
  t.equal(edit.body.data.state, 'draft');
});

t.test('racing transitions: exactly one wins', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const editor = await signIn(app, { role: 'editor' });
  const publishers = [await signIn(app, { role: 'publisher' }), await signIn(app, { role: 'publisher' }), owner];
  const id = await makeTable(app, owner);
  const rec = await add(app, editor, id, 'Tart');
  await take(app, editor, id, rec, 'submit');
  // Three approvers race from 'submitted': one moves it, the others find it moved.
  const answers = await contended(app, () => publishers.map((p) => take(app, p, id, rec, 'approve')));
  const statuses = answers.map((a) => a.status).sort();
  t.same(statuses, [200, 409, 409], JSON.stringify(answers.map((a) => a.body.error?.message ?? a.body.data.state)));
  const record = (await app.json(recordsUrl(id, `/${rec}`), { headers: owner.headers })).body.data;
  t.equal(record.revision, 3, 'one change only');
  t.equal(record.state, 'approved');
  t.equal(answers.find((a) => a.status === 200)!.body.data.revision, 3, 'the winner’s answer is its own change');
  t.equal(record.history.filter((e: { kind: string }) => e.kind === 'transition').length, 2, 'submit and the one winner');
});

t.test('approvals inbox: what waits on the caller, oldest first, not what they approved', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const editor = await signIn(app, { role: 'editor' });
  const p1 = await signIn(app, { role: 'publisher' });
  const p2 = await signIn(app, { role: 'publisher' });
  const a = await makeTable(app, owner);
  const b = await makeTable(app, owner, {
    states: ['draft', 'submitted', 'published'],
    transitions: [
      { name: 'submit', from: 'draft', to: 'submitted', who: { grants: ['editor', 'owner'] } },
      { name: 'publish', from: 'submitted', to: 'published', who: { roles: ['publisher'] }, approvals: 2 },
      { name: 'back', from: 'submitted', to: 'draft', who: { roles: ['publisher'] } },
    ],
  });
  const r1 = await add(app, editor, a, 'First');
  const r2 = await add(app, editor, b, 'Second');
  const r3 = await add(app, editor, a, 'Third');
  await add(app, editor, a, 'Still a draft');
  for (const [src, rec] of [
    [a, r1],
    [b, r2],
    [a, r3],
  ] as const) {
    await take(app, editor, src, rec, 'submit');
    await new Promise((r) => setTimeout(r, 5)); // distinct state-change times
  }
  const inbox = async (who: SignedIn, query = '') => {
    const res = await app.json(`/api/v1/approvals${query}`, { headers: who.headers });
    t.equal(res.status, 200);
    return res.body.data;
  };
  const mine = await inbox(p1);
  t.same(
    mine.items.map((i: { record: { values: { dish: string } } }) => i.record.values.dish),
    ['First', 'Second', 'Third'],
    'oldest first, across tables; drafts wait on nobody',
  );
  t.match(mine.items[1], { sourceId: b, record: { id: r2, state: 'submitted' } });
  t.same(
    mine.items[0].transitions.map((x: { name: string }) => x.name),
    ['approve', 'reject'],
  );
  t.same(
    mine.items[1].transitions.map((x: { name: string; approvals: number }) => [x.name, x.approvals]),
    [['publish', 2]],
    'back leads to the initial state: not waiting',
  );
  t.same((await inbox(editor)).items, [], 'nothing waits on an editor here');
  // Paging, one at a time.
  const firstPage = await inbox(p1, '?limit=1');
  t.equal(firstPage.items.length, 1);
  const secondPage = await inbox(p1, `?limit=1&cursor=${encodeURIComponent(firstPage.nextCursor)}`);
  t.equal(secondPage.items[0].record.id, r2);

  // p1 approves r2 (1 of 2): it leaves p1's inbox, stays in p2's; approving r1 moves it on for both.
  await take(app, p1, b, r2, 'publish');
  await take(app, p1, a, r1, 'approve');
  const after = (await inbox(p1)).items.map((i: { record: { id: string; state: string } }) => [i.record.id, i.record.state]);
  t.same(
    after,
    [
      [r3, 'submitted'],
      [r1, 'approved'],
    ],
    'r2 waits on another person now; r1 moved last',
  );
  t.same(
    (await inbox(p2)).items.map((i: { record: { id: string } }) => i.record.id),
    [r2, r3, r1],
  );
});

t.test('publishAt / unpublishAt: the scheduler opens and closes the window', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const id = await makeTable(app, owner);
  const rec = await add(app, owner, id, 'Brunch', { publishAt: new Date(Date.now() + 1500).toISOString() });
  for (const step of ['submit', 'approve', 'publish']) t.equal((await take(app, owner, id, rec, step)).status, 200, step);
  const published = (await app.json(recordsUrl(id, `/${rec}`), { headers: owner.headers })).body.data;
  t.match(published, { state: 'published', live: false }, 'published but not yet inside its window');
  t.same(await onScreens(app, owner, id), []);

  app.deps.periodic.start();
  const until = async (want: string[], what: string) => {
    const deadline = Date.now() + 15_000;
    let seen: string[] = [];
    while (Date.now() < deadline) {
      seen = await onScreens(app, owner, id);
      if (JSON.stringify(seen) === JSON.stringify(want)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    t.same(seen, want, what);
  };
  await until(['Brunch'], 'the window opened: on screens');
  const live = (await app.json(recordsUrl(id, `/${rec}`), { headers: owner.headers })).body.data;
  t.equal(live.live, true);
  t.match(live.history.at(-1), { kind: 'scheduled', userId: null, data: { live: true } });

  const closing = await app.json(recordsUrl(id, `/${rec}`), {
    method: 'PATCH',
    headers: owner.headers,
    json: { unpublishAt: new Date(Date.now() + 1500).toISOString() },
  });
  t.match(closing.body.data, { state: 'published', live: true }, 'a window change alone keeps the state');
  await until([], 'the window closed: off screens');
  const closed = (await app.json(recordsUrl(id, `/${rec}`), { headers: owner.headers })).body.data;
  t.match(closed, { state: 'published', live: false });
  t.match(closed.history.at(-1), { kind: 'scheduled', data: { live: false } });
});

t.test('a new workflow that drops a state records are in is refused, naming the states and counts', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const id = await makeTable(app, owner);
  const a = await add(app, owner, id, 'Soup');
  await add(app, owner, id, 'Pie');
  t.equal((await take(app, owner, id, a, 'submit')).status, 200);
  const approverOnly = { roles: ['owner'] };
  // Two states, no 'submitted': the submitted record would be stranded.
  const simple = {
    states: ['draft', 'published'],
    initial: 'draft',
    transitions: [
      { name: 'publish', from: 'draft', to: 'published', who: approverOnly },
      { name: 'unpublish', from: 'published', to: 'draft', who: approverOnly },
    ],
  };
  const url = `/api/v1/data-sources/${id}/form/workflow`;
  let res = await app.json(url, { method: 'PUT', headers: owner.headers, json: simple });
  t.equal(res.status, 409);
  t.equal(res.body.error.code, 'conflict');
  t.same(res.body.error.details.states, { submitted: 1 });
  t.match(res.body.error.message, /submitted: 1/);
  const form = await app.json(`/api/v1/data-sources/${id}/form`, { headers: owner.headers });
  t.ok(form.body.data.workflow.states.includes('submitted'), 'the old definition stays');
  // Once the record is back in draft, the same definition is taken.
  t.equal((await take(app, owner, id, a, 'reject', 'not today')).status, 200);
  t.equal((await take(app, owner, id, a, 'revise')).status, 200);
  res = await app.json(url, { method: 'PUT', headers: owner.headers, json: simple });
  t.equal(res.status, 200);
  t.same(res.body.data.workflow.states, ['draft', 'published']);
  t.equal((await take(app, owner, id, a, 'publish')).status, 200, 'records follow the new definition');
  t.same(await onScreens(app, owner, id), ['Soup']);
});
