import t, { type Test } from 'tap';
import { signIn } from './helpers/auth.js';
import { startApp } from './helpers/harness.js';

async function setup(t: Test) {
  const app = await startApp(t);
  const owner = await signIn(app);
  const call = (method: string, path: string, json?: unknown, headers: Record<string, string> = {}) =>
    app.json(path, { method, headers: { ...owner.headers, ...headers }, ...(json !== undefined ? { json } : {}) });
  return { app, owner, call };
}

const ID = '0190f5a2-7b3c-7def-8abc-0123456789ab';

t.test('schedule input is checked before anything is stored', async (t) => {
  const { call } = await setup(t);
  const playlist = (await call('POST', '/api/v1/playlists', { name: 'P' })).body.data;
  const base = { name: 'S', content: { playlistId: playlist.id }, targets: { screenIds: [ID] }, startsAt: '2026-06-01T09:00:00Z', endsAt: '2026-06-01T17:00:00Z' };
  const cases: [string, unknown, RegExp][] = [
    ['campaign', { ...base, content: { campaignId: ID } }, /Campaigns are not available/],
    ['two contents', { ...base, content: { playlistId: playlist.id, layoutId: ID } }, /exactly one/],
    ['unknown playlist', { ...base, content: { playlistId: ID } }, /No playlist/],
    ['no targets', { ...base, targets: {} }, /at least one/],
    ['unknown target', base, /Unknown targets/],
    ['bad zone', { ...base, timeZone: 'Mars/Olympus' }, /IANA/],
  ];
  for (const [label, body, message] of cases) {
    const res = await call('POST', '/api/v1/schedules', body);
    t.equal(res.status, 400, label);
    t.match(res.body.error.message, message, label);
  }
  t.equal((await call('GET', '/api/v1/schedules')).body.data.items.length, 0);
  const preview = await call('POST', '/api/v1/schedules/preview', { screenId: ID, from: '2026-06-01T00:00:00Z', to: '2026-06-02T00:00:00Z' });
  t.equal(preview.status, 404);
  t.equal((await call('POST', '/api/v1/schedules/preview', { screenId: ID, from: '2026-06-02T00:00:00Z', to: '2026-06-01T00:00:00Z' })).status, 400);
  t.equal((await call('POST', '/api/v1/schedules/preview', { from: '2026-06-01T00:00:00Z', to: '2026-06-02T00:00:00Z' })).status, 400);
});
