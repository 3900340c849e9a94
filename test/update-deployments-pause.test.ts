import t from 'tap';
import { signedInApp, signIn } from './helpers/auth.js';
import type { TestApp } from './helpers/harness.js';
import { fleetScreen, makeRelease, until } from './helpers/update-deployments.js';

/** Pause and resume by hand (extension routes; docs/update-deployments.md "Pause and resume"). */

const status = (app: TestApp, s: { headers: Record<string, string> }, id: string, json: unknown) =>
  app.json(`/api/v1/player/update-deployments/${id}/status`, { method: 'POST', headers: s.headers, json });

async function fleet(app: TestApp, owner: Awaited<ReturnType<typeof signIn>>, n: number) {
  const screens = [];
  for (let i = 0; i < n; i++) screens.push(await fleetScreen(app, owner, `p${i}`, { family: 'edge', architecture: 'x86_64', version: '1.0.0' }));
  const release = await makeRelease(app, { family: 'edge', version: '2.0.0', artifacts: [{ architecture: 'x86_64', kind: 'tarball' }] });
  return { screens, release };
}

t.test('a paused deployment offers nothing new and holds its next wave even with waveWaitSec 0; resume continues', async (t) => {
  const { app, owner, call } = await signedInApp(t);
  const { screens, release } = await fleet(app, owner, 3);
  const created = (
    await call('POST', '/api/v1/update-deployments', {
      releaseId: release.id,
      targets: { all: true },
      waves: [{ screens: 1 }, { percent: 100 }],
      waveWaitSec: 0,
    })
  ).body.data;
  t.match(created, { state: 'running', counts: { offered: 1, pending: 2 } });
  const canaryId = created.screens.find((s: any) => s.wave === 0).screenId;
  const canary = screens.find((s) => s.screenId === canaryId)!;
  const others = screens.filter((s) => s !== canary);

  const paused = await call('POST', `/api/v1/update-deployments/${created.id}/pause`);
  t.equal(paused.status, 200);
  t.match(paused.body.data, { state: 'paused', pausedReason: 'manual', counts: { offered: 1, pending: 2 } });
  const again = await call('POST', `/api/v1/update-deployments/${created.id}/pause`);
  t.equal(again.status, 200, 'already paused: answered as it is');
  t.match(again.body.data, { state: 'paused', pausedReason: 'manual', revision: paused.body.data.revision });

  // The canary holds the offer: it still reads the metadata, reports, and is confirmed.
  t.equal((await app.json(`/api/v1/player/updates/${release.id}`, { headers: canary.headers })).status, 200, 'the offered screen still reads the update');
  t.equal((await status(app, canary, created.id, { state: 'downloading', progress: 0.5 })).body.data.state, 'downloading');
  t.equal((await status(app, canary, created.id, { state: 'installed', version: '2.0.0' })).body.data.state, 'installed');
  // Several steps of the tick: the canary wave settles, but the next wave (no wait) does not start.
  for (let i = 0; i < 3; i++) await app.deps.periodic.runNow('update-deployments.tick');
  let d = (await call('GET', `/api/v1/update-deployments/${created.id}`)).body.data;
  t.match(d, { state: 'paused', pausedReason: 'manual', currentWave: 0, counts: { installed: 1, pending: 2, offered: 0 } });
  t.match(d.waves, [{ state: 'done' }, { state: 'pending', startedAt: null }], 'the canary wave is done, the next waits for resume');
  for (const s of others) {
    t.equal((await app.json('/api/v1/player/config', { headers: s.headers })).body.data.update, null, `${s.name}: no offer while paused`);
    t.equal((await app.json(`/api/v1/player/updates/${release.id}`, { headers: s.headers })).status, 404);
  }
  t.match(await status(app, others[0]!, created.id, { state: 'downloading' }), { status: 409, body: { error: { code: 'conflict' } } }, 'not offered');

  const resumed = await call('POST', `/api/v1/update-deployments/${created.id}/resume`);
  t.equal(resumed.status, 200);
  t.match(resumed.body.data, { state: 'running', pausedReason: null, currentWave: 1, counts: { installed: 1, offered: 2 } }, 'the next wave at once');
  for (const s of others) t.match((await app.json('/api/v1/player/config', { headers: s.headers })).body.data.update, { deploymentId: created.id });
  const twice = await call('POST', `/api/v1/update-deployments/${created.id}/resume`);
  t.match(twice, { status: 200, body: { data: { state: 'running', revision: resumed.body.data.revision } } }, 'running: answered as it is');

  for (const s of others) await status(app, s, created.id, { state: 'installed', version: '2.0.0' });
  d = await until(app, owner, created.id, (x) => x.state === 'completed');
  t.match(d.counts, { installed: 3 });
  t.match(await call('POST', `/api/v1/update-deployments/${created.id}/pause`), { status: 409, body: { error: { code: 'deployment_finished' } } });
  t.match(await call('POST', `/api/v1/update-deployments/${created.id}/resume`), { status: 409, body: { error: { code: 'deployment_finished' } } });
});

t.test('a paused deployment is not completed; a cancelled one refuses pause and resume', async (t) => {
  const { app, owner, call } = await signedInApp(t);
  const { screens, release } = await fleet(app, owner, 1);
  const d = (await call('POST', '/api/v1/update-deployments', { releaseId: release.id, targets: { all: true }, waveWaitSec: 0 })).body.data;
  await call('POST', `/api/v1/update-deployments/${d.id}/pause`);
  await status(app, screens[0]!, d.id, { state: 'installed', version: '2.0.0' });
  const held = await until(app, owner, d.id, (x) => x.counts.installed === 1);
  t.match(held, { state: 'paused', pausedReason: 'manual' }, 'every screen installed, but it stays paused until resumed');
  t.match((await call('POST', `/api/v1/update-deployments/${d.id}/resume`)).body.data, { state: 'completed', pausedReason: null });

  const r2 = await makeRelease(app, { family: 'edge', version: '3.0.0', artifacts: [{ architecture: 'any', kind: 'tarball' }] });
  const d2 = (await call('POST', '/api/v1/update-deployments', { releaseId: r2.id, targets: { all: true } })).body.data;
  t.equal((await call('POST', `/api/v1/update-deployments/${d2.id}/pause`)).status, 200);
  t.match(
    (await call('POST', `/api/v1/update-deployments/${d2.id}/cancel`)).body.data,
    { state: 'cancelled', pausedReason: null },
    'a paused one can be cancelled',
  );
  t.match(await call('POST', `/api/v1/update-deployments/${d2.id}/pause`), { status: 409, body: { error: { code: 'deployment_finished' } } });
  t.match(await call('POST', `/api/v1/update-deployments/${d2.id}/resume`), { status: 409, body: { error: { code: 'deployment_finished' } } });
});

t.test('resume needs the failures under the threshold', async (t) => {
  const { app, owner, call } = await signedInApp(t);
  const { screens, release } = await fleet(app, owner, 3);
  const created = (
    await call('POST', '/api/v1/update-deployments', {
      releaseId: release.id,
      targets: { all: true },
      waves: [{ screens: 1 }, { percent: 100 }],
      waveWaitSec: 0,
      failureThreshold: 1,
    })
  ).body.data;
  const canary = screens.find((s) => s.screenId === created.screens.find((x: any) => x.wave === 0).screenId)!;
  t.equal((await status(app, canary, created.id, { state: 'failed', error: 'disk full' })).body.data.state, 'failed');
  let d = await until(app, owner, created.id, (x) => x.state === 'paused');
  t.equal(d.pausedReason, 'failure_threshold');
  t.match(await call('POST', `/api/v1/update-deployments/${created.id}/pause`), {
    status: 200,
    body: { data: { state: 'paused', pausedReason: 'failure_threshold' } },
  });
  const refused = await call('POST', `/api/v1/update-deployments/${created.id}/resume`);
  t.match(refused, { status: 409, body: { error: { code: 'conflict', message: /1 screen failed.*retry/, details: { failed: 1, failureThreshold: 1 } } } });
  t.match((await call('GET', `/api/v1/update-deployments/${created.id}`)).body.data, { state: 'paused', pausedReason: 'failure_threshold' }, 'unchanged');

  // Paused by hand, then a failure reaching the threshold: still paused by hand, resume refused, retry does not resume it.
  d = (await call('POST', `/api/v1/update-deployments/${created.id}/screens/${canary.screenId}/retry`)).body.data;
  t.match(d, { state: 'running', pausedReason: null }, 'the retry brought the failures under the threshold');
  t.match((await call('POST', `/api/v1/update-deployments/${created.id}/pause`)).body.data, { state: 'paused', pausedReason: 'manual' });
  await status(app, canary, created.id, { state: 'failed', error: 'disk full again' });
  d = await until(app, owner, created.id, (x) => x.counts.failed === 1);
  t.match(d, { state: 'paused', pausedReason: 'manual' });
  t.match(await call('POST', `/api/v1/update-deployments/${created.id}/resume`), { status: 409, body: { error: { code: 'conflict' } } });
  d = (await call('POST', `/api/v1/update-deployments/${created.id}/screens/${canary.screenId}/retry`)).body.data;
  t.match(d, { state: 'paused', pausedReason: 'manual', counts: { offered: 1, failed: 0, pending: 2 } }, 'a retry offers that screen, the pause by hand holds');
  await status(app, canary, created.id, { state: 'installed', version: '2.0.0' });
  d = (await call('POST', `/api/v1/update-deployments/${created.id}/resume`)).body.data;
  t.match(d, { state: 'running', currentWave: 1, counts: { installed: 1, offered: 2 } });
});

t.test('roles, unknown ids and bad ids answer the error envelope', async (t) => {
  const { app, owner, call } = await signedInApp(t);
  const { release } = await fleet(app, owner, 1);
  const d = (await call('POST', '/api/v1/update-deployments', { releaseId: release.id, targets: { all: true } })).body.data;
  const NOPE = '0190f5a2-7b3c-7def-8abc-0123456789ab';
  for (const action of ['pause', 'resume']) {
    t.match(await call('POST', `/api/v1/update-deployments/${NOPE}/${action}`), { status: 404, body: { error: { code: 'not_found' } } }, `${action}: unknown`);
    t.match(await call('POST', `/api/v1/update-deployments/not-a-uuid/${action}`), { status: 404, body: { error: { code: 'not_found' } } });
    t.match(await call('GET', `/api/v1/update-deployments/${d.id}/${action}`), { status: 405, body: { error: { code: 'method_not_allowed' } } });
    t.match(await app.json(`/api/v1/update-deployments/${d.id}/${action}`, { method: 'POST' }), { status: 401, body: { error: { code: 'unauthenticated' } } });
    for (const role of ['editor', 'publisher'] as const) {
      const who = await signIn(app, { role });
      t.match(
        await app.json(`/api/v1/update-deployments/${d.id}/${action}`, { method: 'POST', headers: who.headers }),
        { status: 403, body: { error: { code: 'forbidden' } } },
        `${action}: ${role} refused`,
      );
    }
  }
  t.match((await call('GET', `/api/v1/update-deployments/${d.id}`)).body.data, { state: 'running' }, 'nothing changed');
  const admin = await signIn(app, { role: 'admin' });
  const byAdmin = await app.json(`/api/v1/update-deployments/${d.id}/pause`, { method: 'POST', headers: admin.headers });
  t.match(byAdmin, { status: 200, body: { data: { state: 'paused', pausedReason: 'manual' } } }, 'an admin may');
  t.match(await app.json(`/api/v1/update-deployments/${d.id}/resume`, { method: 'POST', headers: admin.headers }), {
    status: 200,
    body: { data: { state: 'running' } },
  });
});
