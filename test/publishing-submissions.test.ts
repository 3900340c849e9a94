import t from 'tap';
import { publishDue } from '../server/src/modules/publishing/index.js';
import { startApp } from './helpers/harness.js';
import { publishingWorld } from './helpers/publishing.js';

const NOPE = '0190f5a2-7b3c-7def-8abc-0123456789ab';
const sub = '/api/v1/content-submissions';

t.test('approvals on: an editor’s change reaches the screen only once a publisher approves and publishes it', async (t) => {
  const app = await startApp(t);
  const w = await publishingWorld(app);
  const editor = w.as(w.editor);
  const publisher = w.as(w.publisher);
  t.equal(await w.playing(), null, 'never published: nothing plays');

  const submitted = await editor('POST', `${sub}/layout/${w.layout.id}`, { message: 'first cut' });
  t.equal(submitted.status, 201);
  t.match(submitted.body.data, {
    type: 'layout',
    contentId: w.layout.id,
    contentName: 'Board',
    kind: 'draft',
    state: 'pending',
    message: 'first cut',
    submittedBy: w.editor.user.id,
    submittedByName: 'Test editor',
    draftRevision: w.layout.revision,
    decidedBy: null,
    publication: null,
  });
  const id = submitted.body.data.id;
  t.equal(await w.playing(), null, 'submitted: still nothing on screen');

  t.equal((await editor('POST', `${sub}/${id}/approve`, {})).status, 403, 'an editor may not approve');
  t.equal((await publisher('POST', `${sub}/${id}/publish`, {})).status, 409, 'pending: not publishable yet');
  const approved = await publisher('POST', `${sub}/${id}/approve`, { comment: 'fine' });
  t.equal(approved.status, 200);
  t.match(approved.body.data, { state: 'approved', decidedBy: w.publisher.user.id, comment: 'fine' });
  t.equal(await w.playing(), null, 'approved: not yet on screen');

  const published = await publisher('POST', `${sub}/${id}/publish`, {});
  t.equal(published.status, 200);
  t.match(published.body.data, { state: 'published', publication: { number: 1 } });
  t.same(await w.playing(), { number: 1, width: 960 }, 'published: on screen');
  t.match((await editor('GET', `/api/v1/layouts/${w.layout.id}/revisions`)).body.data.items, [{ number: 1, source: 'submission' }], 'the revision says why');
  const again = await publisher('POST', `${sub}/${id}/publish`, {});
  t.equal(again.status, 409);
  t.match(again.body.error.message, /published/, 'the message names the state');

  // A later edit stays a draft; the screen keeps publication 1.
  await w.editDraft(w.editor, 500);
  t.same(await w.playing(), { number: 1, width: 960 });

  const detail = await editor('GET', `${sub}/${id}`);
  t.same(
    detail.body.data.events.map((e: any) => [e.action, e.byName, e.comment]),
    [
      ['submitted', 'Test editor', 'first cut'],
      ['approved', 'Test publisher', 'fine'],
      ['published', 'Test publisher', 'first cut'],
    ],
  );
  const notes = await editor('GET', '/api/v1/notifications?unread=true');
  t.same(
    notes.body.data.items.map((n: any) => n.kind),
    ['submission.published', 'submission.approved'],
    'the submitter hears of each step',
  );
  t.same(
    (await publisher('GET', '/api/v1/notifications')).body.data.items.map((n: any) => [n.kind, n.title, n.body, n.submissionId]),
    [['submission.submitted', 'Submitted for approval: Board', 'first cut', id]],
    'approvers hear of the submission, not of their own steps',
  );
  for (const who of [w.owner, w.publisher2]) {
    t.same(
      (await w.as(who)('GET', '/api/v1/notifications')).body.data.items.map((n: any) => n.kind),
      ['submission.submitted'],
      'every approver is told',
    );
  }
  t.same((await editor('POST', '/api/v1/notifications/read', {})).body.data, { updated: 2 });
  t.same((await editor('GET', '/api/v1/notifications?unread=true')).body.data.items, []);
  t.equal((await editor('GET', '/api/v1/notifications')).body.data.items.length, 2, 'read ones are kept');
});

t.test('nothing to submit, superseding, self-approval, stale, request-changes', async (t) => {
  const app = await startApp(t);
  const w = await publishingWorld(app);
  const editor = w.as(w.editor);
  const publisher = w.as(w.publisher);

  const first = (await editor('POST', `${sub}/layout/${w.layout.id}`, {})).body.data;
  const second = await editor('POST', `${sub}/layout/${w.layout.id}`, { message: 'again' });
  t.equal(second.status, 201);
  const old = (await editor('GET', `${sub}/${first.id}`)).body.data;
  t.equal(old.state, 'cancelled', 'a newer submission cancels the open one');
  t.match(old.events.at(-1), { action: 'cancelled', comment: `superseded by ${second.body.data.id}` });

  // Self-approval: refused, then allowed by the setting.
  const own = (await publisher('POST', `${sub}/layout/${w.layout.id}`, {})).body.data;
  const self = await publisher('POST', `${sub}/${own.id}/approve`, {});
  t.equal(self.status, 403);
  t.match(self.body.error, { code: 'forbidden', message: /another publisher/ });
  t.equal((await w.as(w.owner)('PATCH', '/api/v1/settings', { approvals: { allowSelfApproval: true } })).status, 200);
  t.equal((await publisher('POST', `${sub}/${own.id}/approve`, {})).status, 200, 'allowed with approvals.allowSelfApproval');
  t.equal((await publisher('POST', `${sub}/${own.id}/publish`, {})).status, 200);
  t.same(await w.playing(), { number: 1, width: 960 });
  const nothing = await editor('POST', `${sub}/layout/${w.layout.id}`, {});
  t.equal(nothing.status, 409, 'the draft is what screens play: nothing to submit');
  t.match(nothing.body.error.message, /no unpublished changes/);

  // Stale: the draft changes after submission.
  await w.editDraft(w.editor, 700);
  const s = (await editor('POST', `${sub}/layout/${w.layout.id}`, {})).body.data;
  await w.editDraft(w.editor, 800);
  const stale = await w.as(w.publisher2)('POST', `${sub}/${s.id}/approve`, {});
  t.equal(stale.status, 409);
  t.match(stale.body.error, { code: 'conflict', message: /draft changed after submission.*resubmit/ });
  t.equal((await editor('GET', `${sub}/${s.id}`)).body.data.state, 'stale');
  t.same(await w.playing(), { number: 1, width: 960 }, 'nothing published');

  // Request changes: comment required; the submitter is told with the comment.
  const r = (await editor('POST', `${sub}/layout/${w.layout.id}`, {})).body.data;
  const missing = await publisher('POST', `${sub}/${r.id}/request-changes`, {});
  t.equal(missing.status, 400);
  t.equal(missing.body.error.code, 'validation_failed');
  t.equal((await publisher('POST', `${sub}/${r.id}/request-changes`, { comment: '' })).status, 400);
  t.equal((await publisher('POST', `${sub}/${r.id}/request-changes`, { comment: 'x'.repeat(2001) })).status, 400);
  const back = await publisher('POST', `${sub}/${r.id}/request-changes`, { comment: 'Too wide' });
  t.equal(back.status, 200);
  t.match(back.body.data, { state: 'changes_requested', comment: 'Too wide' });
  const note = (await editor('GET', '/api/v1/notifications?unread=true')).body.data.items[0];
  t.match(note, { kind: 'submission.changes_requested', body: 'Too wide', submissionId: r.id });
  const twice = await publisher('POST', `${sub}/${r.id}/approve`, {});
  t.equal(twice.status, 409);
  t.match(twice.body.error.message, /changes requested/);

  // The list: filters and newest first.
  const mine = await editor('GET', `${sub}?submittedBy=me`);
  t.same(
    mine.body.data.items.map((x: any) => x.id),
    [r.id, s.id, second.body.data.id, first.id],
  );
  t.same(
    (await editor('GET', `${sub}?state=stale`)).body.data.items.map((x: any) => x.id),
    [s.id],
  );
  t.equal((await editor('GET', `${sub}?contentId=${w.layout.id}&type=layout&limit=2`)).body.data.items.length, 2);
  const paged = await editor('GET', `${sub}?limit=2`);
  const rest = await editor('GET', `${sub}?limit=10&cursor=${paged.body.data.nextCursor}`);
  t.equal(paged.body.data.items.length + rest.body.data.items.length, 5, 'the pages cover all');
  t.equal((await editor('GET', `${sub}?submittedBy=banana`)).status, 400);
  t.equal((await editor('GET', `${sub}?state=nope`)).status, 400);
});

t.test('bad inputs: unknown types and ids, wrong states, bad times', async (t) => {
  const app = await startApp(t);
  const w = await publishingWorld(app);
  const editor = w.as(w.editor);
  const publisher = w.as(w.publisher);
  const unknown = await editor('POST', `${sub}/gadget/${w.layout.id}`, {});
  t.equal(unknown.status, 404);
  t.match(unknown.body.error, { code: 'not_found', message: /the types are .*layout/ });
  t.equal((await editor('POST', `${sub}/layout/${NOPE}`, {})).status, 404, 'unknown item');
  t.equal((await editor('POST', `${sub}/layout/not-a-uuid`, {})).status, 404);
  t.equal((await editor('GET', `${sub}/${NOPE}`)).status, 404);
  for (const action of ['approve', 'publish', 'cancel-schedule']) t.equal((await publisher('POST', `${sub}/${NOPE}/${action}`, {})).status, 404, action);
  t.equal((await editor('POST', `${sub}/layout/${w.layout.id}`, { message: 5 })).status, 400);
  t.equal((await editor('POST', `${sub}/layout/${w.layout.id}`, { other: 1 })).status, 400, 'unknown fields refused');

  const s = (await editor('POST', `${sub}/layout/${w.layout.id}`, {})).body.data;
  t.equal(
    (await publisher('POST', `${sub}/${s.id}/schedule`, { publishAt: new Date(Date.now() + 60_000).toISOString() })).status,
    409,
    'pending: not schedulable',
  );
  t.equal((await publisher('POST', `${sub}/${s.id}/cancel-schedule`)).status, 409);
  t.equal((await publisher('POST', `${sub}/${s.id}/approve`, {})).status, 200);
  for (const [label, publishAt] of <[string, string][]>[
    ['past', new Date(Date.now() - 1000).toISOString()],
    ['too far', new Date(Date.now() + 400 * 24 * 3600_000).toISOString()],
    ['not an instant', 'tomorrow'],
  ]) {
    const res = await publisher('POST', `${sub}/${s.id}/schedule`, { publishAt });
    t.equal(res.status, 400, label);
    t.equal(res.body.error.code, 'validation_failed', label);
  }
  t.equal((await publisher('POST', `${sub}/${s.id}/schedule`, {})).status, 400, 'publishAt required');
  t.equal((await editor('GET', `${sub}/${s.id}`)).body.data.state, 'approved', 'still approved');
});

t.test('a publish that refers to what is gone leaves the submission approved, with publish_failed', async (t) => {
  const app = await startApp(t);
  const w = await publishingWorld(app);
  const editor = w.as(w.editor);
  const publisher = w.as(w.publisher);
  const s = (await editor('POST', `${sub}/layout/${w.layout.id}`, {})).body.data;
  t.equal((await publisher('POST', `${sub}/${s.id}/approve`, {})).status, 200);
  // The draft stops using the playlist, which is then deleted: the submitted snapshot refers to it.
  const res = await editor('PUT', `/api/v1/layouts/${w.layout.id}/draft`, { zones: [{ id: 'left', x: 0, y: 0, width: 100, height: 100 }] });
  t.equal(res.status, 200);
  t.equal((await w.as(w.owner)('DELETE', `/api/v1/playlists/${w.menu.id}`)).status, 204);
  const failed = await publisher('POST', `${sub}/${s.id}/publish`, {});
  t.equal(failed.status, 409);
  t.match(failed.body.error, { code: 'conflict', details: { missing: [`playlist ${w.menu.id}`] } });
  const after = (await editor('GET', `${sub}/${s.id}`)).body.data;
  t.equal(after.state, 'approved');
  t.equal(after.events.at(-1).action, 'publish_failed');
  t.equal(await w.playing(), null);
  t.match((await editor('GET', '/api/v1/notifications')).body.data.items[0], { kind: 'submission.publish_failed' });
});

t.test('scheduled publish: at the time, once, across racing ticks; cancel-schedule', async (t) => {
  const app = await startApp(t);
  const w = await publishingWorld(app);
  const editor = w.as(w.editor);
  const publisher = w.as(w.publisher);
  const s = (await editor('POST', `${sub}/layout/${w.layout.id}`, {})).body.data;
  await publisher('POST', `${sub}/${s.id}/approve`, {});
  const at = Date.now() + 2000;
  const scheduled = await publisher('POST', `${sub}/${s.id}/schedule`, { publishAt: new Date(at).toISOString() });
  t.equal(scheduled.status, 200);
  t.match(scheduled.body.data, { state: 'scheduled', publishAt: new Date(at).toISOString() });
  t.equal(await publishDue(app.deps), 0, 'not due yet');
  t.equal(await w.playing(), null);
  await new Promise((r) => setTimeout(r, at - Date.now() + 50));
  const counts = await Promise.all([publishDue(app.deps), publishDue(app.deps), publishDue(app.deps)]);
  t.equal(
    counts.reduce((a, b) => a + b, 0),
    1,
    'three racing ticks publish once',
  );
  const revisions = (await editor('GET', `/api/v1/content-history/layout/${w.layout.id}/publications`)).body.data.items;
  t.equal(revisions.length, 1, 'one publication');
  t.match(revisions[0], { number: 1, source: 'submission', current: true, publishedBy: w.publisher.user.id });
  t.same(await w.playing(), { number: 1, width: 960 });
  t.match((await editor('GET', `${sub}/${s.id}`)).body.data, { state: 'published', publication: { number: 1 } });
  t.match((await editor('GET', '/api/v1/notifications')).body.data.items[0], { kind: 'submission.published' });

  // Cancel a schedule: approved again, nothing published at the time.
  await w.editDraft(w.editor, 300);
  const c = (await editor('POST', `${sub}/layout/${w.layout.id}`, {})).body.data;
  await publisher('POST', `${sub}/${c.id}/approve`, {});
  await publisher('POST', `${sub}/${c.id}/schedule`, { publishAt: new Date(Date.now() + 1000).toISOString() });
  const cancelled = await publisher('POST', `${sub}/${c.id}/cancel-schedule`);
  t.equal(cancelled.status, 200);
  t.match(cancelled.body.data, { state: 'approved', publishAt: null });
  await new Promise((r) => setTimeout(r, 1100));
  t.equal(await publishDue(app.deps), 0);
  t.same(await w.playing(), { number: 1, width: 960 }, 'still publication 1');
  t.same(
    (await editor('GET', `${sub}/${c.id}`)).body.data.events.map((e: any) => e.action),
    ['submitted', 'approved', 'scheduled', 'schedule_cancelled'],
  );
});

t.test('the scheduler runs on its own: the periodic task publishes at the time', async (t) => {
  const app = await startApp(t);
  const w = await publishingWorld(app);
  const s = (await w.as(w.editor)('POST', `${sub}/layout/${w.layout.id}`, {})).body.data;
  await w.as(w.publisher)('POST', `${sub}/${s.id}/approve`, {});
  await w.as(w.publisher)('POST', `${sub}/${s.id}/schedule`, { publishAt: new Date(Date.now() + 1500).toISOString() });
  app.deps.periodic.start();
  const deadline = Date.now() + 6000;
  while (Date.now() < deadline && (await w.playing()) === null) await new Promise((r) => setTimeout(r, 200));
  t.same(await w.playing(), { number: 1, width: 960 }, 'published by the tick');
});

t.test('auth/status tells every signed-in role whether approvals are required (the console shows Submit from it)', async (t) => {
  const app = await startApp(t);
  const w = await publishingWorld(app, { approvals: false });
  const anonymous = await app.json('/api/v1/auth/status');
  t.equal(anonymous.body.data.approvalsRequired, false, 'signed out: nothing told');
  t.equal((await w.as(w.editor)('GET', '/api/v1/auth/status')).body.data.approvalsRequired, false);
  t.equal((await w.as(w.owner)('PATCH', '/api/v1/settings', { approvals: { required: true } })).status, 200);
  t.equal((await w.as(w.editor)('GET', '/api/v1/auth/status')).body.data.approvalsRequired, true, 'an editor learns it');
  t.equal((await app.json('/api/v1/auth/status')).body.data.approvalsRequired, false, 'still not told to the signed-out');
});

t.test('deleting an item withdraws its open and scheduled submissions and tells the submitter', async (t) => {
  const app = await startApp(t);
  const w = await publishingWorld(app);
  const editor = w.as(w.editor);
  const publisher = w.as(w.publisher);
  const spare = (await editor('POST', '/api/v1/layouts', { name: 'Spare', zones: [] })).body.data;
  const pending = (await editor('POST', `${sub}/layout/${spare.id}`, { message: 'spare one' })).body.data;
  const extra = (await editor('POST', '/api/v1/playlists', { name: 'Extra' })).body.data;
  const scheduled = (await editor('POST', `${sub}/playlist/${extra.id}`, {})).body.data;
  t.equal((await publisher('POST', `${sub}/${scheduled.id}/approve`, {})).status, 200);
  t.equal((await publisher('POST', `${sub}/${scheduled.id}/schedule`, { publishAt: new Date(Date.now() + 1000).toISOString() })).status, 200);

  t.equal((await publisher('DELETE', `/api/v1/layouts/${spare.id}`)).status, 204);
  t.equal((await publisher('DELETE', `/api/v1/playlists/${extra.id}`)).status, 204);
  for (const [s, type] of [
    [pending, 'layout'],
    [scheduled, 'playlist'],
  ] as const) {
    const after = (await editor('GET', `${sub}/${s.id}`)).body.data;
    t.match(after, { state: 'cancelled', publishAt: null, contentName: '(deleted)' }, `${type}: withdrawn`);
    t.match(after.events.at(-1), { action: 'cancelled', by: null, comment: `the ${type} was deleted` });
  }
  await new Promise((r) => setTimeout(r, 1100));
  t.equal(await publishDue(app.deps), 0, 'the scheduled one does not fire for a deleted playlist');
  const told = (await editor('GET', '/api/v1/notifications?unread=true')).body.data.items.filter((n: any) => n.kind === 'submission.withdrawn');
  t.same(told.map((n: any) => n.title).sort(), ['Withdrawn: Extra', 'Withdrawn: Spare']);
  t.same(
    (await editor('GET', `${sub}?state=pending`)).body.data.items.map((x: any) => x.id),
    [],
    'nothing is left waiting in the inbox',
  );
});
