import t from 'tap';
import { signedInApp, signIn } from './helpers/auth.js';
import { pairScreen } from './helpers/screens.js';

const current = (m: any, at = Date.now()) => m.timeline.find((s: any) => Date.parse(s.startsAt) <= at && Date.parse(s.endsAt) > at);

t.test('overrides: a later start, a message, stop, bad input, editor role', async (t) => {
  const { app, owner, call } = await signedInApp(t);
  const screen = await pairScreen(app, owner);
  const manifest = async () => (await app.json('/api/v1/player/manifest', { headers: screen.headers })).body.data;
  const now = Date.now();
  const later = await call('POST', '/api/v1/presentation-overrides', {
    message: { text: 'Closing soon', severity: 'info' },
    targets: { screenIds: [screen.screenId] },
    startsAt: new Date(now + 2 * 3600_000).toISOString(),
    endsAt: new Date(now + 3 * 3600_000).toISOString(),
  });
  t.equal(later.status, 201, JSON.stringify(later.body));
  t.match(later.body.data, { state: 'scheduled', reason: '', message: { text: 'Closing soon' } });
  let m = await manifest();
  t.equal(current(m).source.type, 'idle', 'not started yet');
  const at = now + 2.5 * 3600_000;
  t.match(current(m, at), {
    source: { type: 'override', id: later.body.data.id },
    content: { type: 'message' },
    message: { text: 'Closing soon', severity: 'info' },
  });
  t.equal(current(m, at).startsAt, new Date(now + 2 * 3600_000).toISOString());

  const editor = await signIn(app, { role: 'editor' });
  const viewer = await signIn(app, { role: 'viewer' });
  const body = { message: { text: 'Now', severity: 'warning' }, targets: { all: true }, endsAt: new Date(now + 3600_000).toISOString(), reason: 'ad hoc' };
  t.equal((await app.json('/api/v1/presentation-overrides', { method: 'POST', headers: viewer.headers, json: body })).status, 403, 'viewer refused');
  const made = await app.json('/api/v1/presentation-overrides', { method: 'POST', headers: editor.headers, json: body });
  t.equal(made.status, 201, 'an editor may override');
  m = await manifest();
  t.match(current(m), { source: { type: 'override', id: made.body.data.id } });

  const stopped = await app.json(`/api/v1/presentation-overrides/${made.body.data.id}/stop`, {
    method: 'POST',
    headers: editor.headers,
    json: { reason: 'done' },
  });
  t.equal(stopped.status, 200);
  t.match(stopped.body.data, { state: 'stopped', endReason: 'done', events: [{ action: 'created' }, { action: 'stopped', reason: 'done' }] });
  t.equal(current(await manifest()).source.type, 'idle', 'stopped: back to what was there');
  const again = await call('POST', `/api/v1/presentation-overrides/${made.body.data.id}/stop`, {});
  t.equal(again.status, 200, 'stopping again answers it unchanged');
  t.equal(again.body.data.events.length, 2);
  const dropped = await call('POST', `/api/v1/presentation-overrides/${later.body.data.id}/stop`, { reason: 'not needed' });
  t.equal(dropped.body.data.state, 'stopped', 'one not started yet can be dropped');
  t.equal((await call('GET', '/api/v1/presentation-overrides')).body.data.items.length, 2);

  const bad = [
    { ...body, endsAt: undefined },
    { ...body, endsAt: new Date(now - 1000).toISOString() },
    { ...body, startsAt: new Date(now + 7200_000).toISOString() },
    { ...body, content: { type: 'layout', id: screen.screenId } },
    { ...body, message: undefined },
  ];
  for (const b of bad) {
    const res = await call('POST', '/api/v1/presentation-overrides', b);
    t.equal(res.status, 400, JSON.stringify(b));
    t.equal(res.body.error.code, 'validation_failed');
  }
  t.equal((await call('POST', `/api/v1/presentation-overrides/${screen.screenId}/stop`, {})).status, 404);
  // A takeover's id is not an override's.
  const tk = await call('POST', '/api/v1/takeovers', { message: { text: 'x', severity: 'info' }, targets: { all: true }, reason: 'r' });
  t.equal((await call('POST', `/api/v1/presentation-overrides/${tk.body.data.id}/stop`, {})).status, 404);
});
