/**
 * One manifest build per shared context (issue 24, docs/decisions.md "One manifest build per
 * shared context"): screens of one group that nothing reaches by their own id get the group's
 * shared build with their id and revision stamped in, byte for byte what a build of their own
 * makes; a screen with its own schedule, assignment, takeover, overlay or update offer gets its
 * own; a change to shared content bumps and rebuilds every screen; the ETag moves with the bytes.
 */
import t from 'tap';
import { signedInApp } from './helpers/auth.js';
import { pairScreen } from './helpers/screens.js';
import { heartbeat, makeRelease } from './helpers/update-deployments.js';

async function setup(t: Parameters<typeof signedInApp>[0]) {
  const { app, owner, call } = await signedInApp(t);
  const site = (await call('POST', '/api/v1/assets/websites', { url: 'https://example.org/', name: 'Site' })).body.data.id as string;
  const group = (await call('POST', '/api/v1/screen-groups', { name: 'Shop floor' })).body.data.id as string;
  const playlist = (await call('POST', '/api/v1/playlists', { name: 'Floor', items: [{ assetId: site, durationMs: 7000 }] })).body.data;
  t.equal((await call('PUT', `/api/v1/screen-groups/${group}/playlist-assignment`, { playlistId: playlist.id })).status, 200);
  const { manifestCache } = await import('../server/src/modules/content/manifest.cache.js');
  const { buildManifest, currentManifest } = await import('../server/src/modules/content/manifest.js');
  const { screenContext } = await import('../server/src/modules/content/screen-context.js');
  const context = async (id: string) => (await screenContext(app.deps.db, id))!;
  const manifest = async (s: { headers: Record<string, string> }, etag?: string) =>
    app.fetch('/api/v1/player/manifest', { headers: { ...s.headers, ...(etag ? { 'if-none-match': etag } : {}) } });
  const depsOf = async (screenId: string) =>
    (
      await app.deps.db
        .selectFrom('manifest_screen_deps as m')
        .innerJoin('manifest_dep_sets as d', 'd.set_id', 'm.set_id')
        .select(['d.kind', 'd.ref_id'])
        .where('m.screen_id', '=', screenId)
        .execute()
    )
      .map((r) => `${r.kind}:${r.ref_id}`)
      .sort();
  /** The cache entry's asset set: one object for every screen served one shared build. */
  const shared = (screenId: string) => manifestCache(app.deps).get(screenId)?.assetIds;
  return { app, owner, call, site, group, playlist, manifestCache, buildManifest, currentManifest, context, manifest, depsOf, shared };
}

t.test('two screens of one group share one build, byte for byte what their own builds make', async (t) => {
  const { app, owner, call, group, playlist, manifestCache, buildManifest, currentManifest, context, manifest, depsOf, shared } = await setup(t);
  const a = await pairScreen(app, owner, { name: 'A', groupIds: [group] });
  const b = await pairScreen(app, owner, { name: 'B', groupIds: [group] });
  const ra = await manifest(a);
  const rb = await manifest(b);
  t.equal(ra.status, 200);
  t.equal(rb.status, 200);
  const ma = ((await ra.json()) as any).data;
  const mb = ((await rb.json()) as any).data;
  t.equal(ma.screenId, a.screenId);
  t.equal(mb.screenId, b.screenId, 'each screen gets its own id');
  t.equal(mb.timeline[0].playlist.id, playlist.id);
  t.ok(shared(a.screenId), 'cached');
  t.equal(shared(a.screenId), shared(b.screenId), 'one build served both');
  // What the cache keeps per screen owns exactly its memory: not a slice of Node's 8 KiB pool
  // slab or of gzip's 16 KiB output buffer (each would pin the whole for as long as it is kept).
  for (const id of [a.screenId, b.screenId]) {
    const entry = manifestCache(app.deps).get(id)!;
    t.equal(entry.bytes.buffer.byteLength, entry.bytes.byteLength, 'the body owns its memory');
    const gz = await entry.gzip;
    t.ok(gz, 'the fetch asked for gzip');
    t.equal(gz!.buffer.byteLength, gz!.byteLength, 'the gzip owns its memory');
  }

  // The stamped bytes are exactly what a build of the screen's own makes (same hour, same instant).
  const at = Date.parse('2026-06-01T10:05:00Z');
  const cb = await context(b.screenId);
  const own = await buildManifest(app.deps.db, cb, at);
  const served = await currentManifest(app.deps, cb, at);
  t.equal(served.body, JSON.stringify({ data: own.manifest }), 'the same JSON as the screen’s own build');
  t.equal(served.bytes.toString(), served.body);

  // Each screen's dependencies are recorded: one set for both, stored once; each screen's own
  // assignment slot is implied by its row, not kept in the shared set.
  const da = await depsOf(a.screenId);
  const db = await depsOf(b.screenId);
  t.ok(da.includes(`playlist:${playlist.id}`) && da.includes(`assignment:${group}`), 'the set holds the playlist and the group’s slot');
  t.same(da, db, 'the same dependencies');
  t.notOk(da.includes(`assignment:${a.screenId}`) || da.includes(`assignment:${b.screenId}`), 'no screen’s own slot in the shared set');
  const sets = await app.deps.db.selectFrom('manifest_screen_deps').select(['screen_id', 'set_id']).execute();
  t.equal(new Set(sets.map((r) => r.set_id)).size, 1, 'both screens name one set');
  const { screensDependingOn } = await import('../server/src/modules/content/manifest.repo.js');
  t.same(await screensDependingOn(app.deps.db, [{ kind: 'assignment', id: b.screenId }]), [b.screenId], 'B’s own slot reaches B alone');
  t.same((await screensDependingOn(app.deps.db, [{ kind: 'playlist', id: playlist.id }])).sort(), [a.screenId, b.screenId].sort(), 'the playlist reaches both');

  // A change to the shared playlist bumps both; each refetches new bytes under a new ETag.
  const etagA = ra.headers.get('etag')!;
  const etagB = rb.headers.get('etag')!;
  t.equal((await manifest(a, etagA)).status, 304, 'unchanged: 304');
  const revs = [(await context(a.screenId)).manifestRevision, (await context(b.screenId)).manifestRevision];
  const items = (await call('GET', `/api/v1/playlists/${playlist.id}`)).body.data.items;
  t.equal((await call('PATCH', `/api/v1/playlists/${playlist.id}/items/${items[0].id}`, { durationMs: 9000 })).status, 200);
  t.same(
    [(await context(a.screenId)).manifestRevision, (await context(b.screenId)).manifestRevision],
    revs.map((r) => r + 1),
    'both screens bumped',
  );
  const na = await manifest(a, etagA);
  const nb = await manifest(b, etagB);
  t.equal(na.status, 200, 'A: the old ETag no longer matches');
  t.equal(nb.status, 200, 'B: the old ETag no longer matches');
  t.not(na.headers.get('etag'), etagA);
  t.not(nb.headers.get('etag'), etagB);
  t.equal(((await na.json()) as any).data.timeline[0].playlist.items[0].durationMs, 9000, 'A has the change');
  t.equal(((await nb.json()) as any).data.timeline[0].playlist.items[0].durationMs, 9000, 'B has the change');
  t.equal(shared(a.screenId), shared(b.screenId), 'rebuilt once, shared again');
  t.equal((await manifest(b, nb.headers.get('etag')!)).status, 304);
});

t.test('a screen with its own schedule, assignment, takeover, overlay or update offer gets a build of its own', async (t) => {
  const { app, owner, call, site, group, manifest, shared } = await setup(t);
  const pair = (name: string, family = 'desktop-linux') => pairScreen(app, owner, { name, groupIds: [group], playerFamily: family });
  const plain = await pair('Plain 1');
  const plain2 = await pair('Plain 2');
  const scheduled = await pair('Scheduled');
  const assigned = await pair('Assigned');
  const taken = await pair('Taken over');
  const overlaid = await pair('Overlaid');
  const offered = await pair('Offered', 'edge');
  const other = (await call('POST', '/api/v1/playlists', { name: 'Own', items: [{ assetId: site, durationMs: 5000 }] })).body.data;

  const sched = await call('POST', '/api/v1/schedules', {
    name: 'Own hours',
    content: { playlistId: other.id },
    targets: { screenIds: [scheduled.screenId] },
    startsAt: '2026-01-01T00:00:00Z',
    endsAt: '2036-01-01T00:00:00Z',
    timeZone: 'UTC',
  });
  t.equal(sched.status, 201, JSON.stringify(sched.body));
  t.equal((await call('PUT', `/api/v1/screens/${assigned.screenId}/playlist-assignment`, { playlistId: other.id })).status, 200);
  const takeover = await call('POST', '/api/v1/takeovers', {
    message: { text: 'Only here', severity: 'info' },
    targets: { screenIds: [taken.screenId] },
    reason: 'one screen',
  });
  t.equal(takeover.status, 201, JSON.stringify(takeover.body));
  t.equal((await call('POST', '/api/v1/plugins/countdown-bar/install')).status, 200);
  const overlay = await call('POST', '/api/v1/plugins/countdown-bar/instances', {
    name: 'Closing',
    targets: { screenIds: [overlaid.screenId] },
    config: { target: { type: 'daily', time: '18:00' }, label: 'Closing soon' },
  });
  t.equal(overlay.status, 201, JSON.stringify(overlay.body));
  await heartbeat(app, offered, { playerFamily: 'edge', playerArchitecture: 'x86_64', playerVersion: '1.0.0' });
  const release = await makeRelease(app, { family: 'edge', version: '2.0.0', artifacts: [{ architecture: 'x86_64', kind: 'tarball' }] });
  const deployment = await call('POST', '/api/v1/update-deployments', { releaseId: release.id, targets: { screenIds: [offered.screenId] } });
  t.equal(deployment.status, 201, JSON.stringify(deployment.body));

  const body = async (s: { headers: Record<string, string> }) => {
    const res = await manifest(s);
    t.equal(res.status, 200);
    return ((await res.json()) as any).data;
  };
  // The plain screens first (they make the shared build), then every other.
  const p1 = await body(plain);
  const p2 = await body(plain2);
  const own = {
    scheduled: await body(scheduled),
    assigned: await body(assigned),
    taken: await body(taken),
    overlaid: await body(overlaid),
    offered: await body(offered),
  };
  t.equal(shared(plain.screenId), shared(plain2.screenId), 'the plain screens share');
  for (const [name, s] of Object.entries({ scheduled, assigned, taken, overlaid, offered })) {
    t.not(shared(s.screenId), shared(plain.screenId), `${name}: a build of its own`);
  }
  t.equal(own.scheduled.timeline[0].source.type, 'schedule');
  t.equal(own.scheduled.timeline[0].playlist.id, other.id, 'its own schedule plays');
  t.match(own.assigned.timeline[0], { source: { type: 'assignment', id: assigned.screenId }, playlist: { id: other.id } }, 'its own assignment plays');
  t.match(
    own.taken.timeline.find((x: any) => x.source.type === 'takeover'),
    { source: { id: takeover.body.data.id }, message: { text: 'Only here' } },
    'its own takeover',
  );
  t.same(
    own.overlaid.overlays.map((o: any) => o.instanceId),
    [overlay.body.data.id],
    'its own overlay',
  );
  t.match(own.offered.update, { releaseId: release.id }, 'its own offer');
  // Nothing of theirs reached the plain screens.
  for (const p of [p1, p2]) {
    t.match(p.timeline[0], { source: { type: 'group-assignment', id: group } });
    t.equal(p.timeline.length, 1);
    t.same(p.overlays, []);
    t.equal(p.update, null);
  }
  t.same(p2.timeline, p1.timeline);

  // The takeover ends: that screen plays the group's content again, from the shared build.
  t.equal((await call('POST', `/api/v1/takeovers/${takeover.body.data.id}/cancel`, { reason: 'done' })).status, 200);
  const back = await body(taken);
  t.same(back.timeline, p1.timeline, 'the group’s content only');
  t.equal(back.screenId, taken.screenId);
  const plain3 = await pair('Plain 3');
  t.same((await body(plain3)).timeline, p1.timeline);
  t.equal(shared(taken.screenId), shared(plain3.screenId), 'nothing of its own any more: it shares (the build since the cancel)');
});

t.test('a window or overlay provider that cannot say which screens it names is asked per screen', async (t) => {
  const { app, owner, group, manifest, shared } = await setup(t);
  const { provideWindows } = await import('../server/src/modules/content/windows.js');
  const { provideOverlays } = await import('../server/src/modules/content/overlays.js');
  const plain = await pairScreen(app, owner, { name: 'Plain', groupIds: [group] });
  const plain2 = await pairScreen(app, owner, { name: 'Plain 2', groupIds: [group] });
  const alerted = await pairScreen(app, owner, { name: 'Alerted', groupIds: [group] });
  const badged = await pairScreen(app, owner, { name: 'Badged', groupIds: [group] });
  const names = (targets: readonly { type: string; id: string }[], id: string) => targets.some((x) => x.type === 'screen' && x.id === id);
  // Registered as a module would, without the screens they name: each screen asks them itself.
  provideWindows(app.deps, async (_db, targets, from, to) =>
    names(targets, alerted.screenId)
      ? [
          {
            source: { type: 'alert', id: 'alert-1' },
            content: { type: 'message', id: 'alert-1' },
            start: from,
            end: to,
            message: { text: 'Storm', severity: 'warning' },
            audio: 'default',
            name: 'Storm',
          },
        ]
      : [],
  );
  provideOverlays(app.deps, async (_db, ctx) =>
    names(ctx.targets, badged.screenId) ? [{ instanceId: 'badge-1', pluginId: 'countdown-bar', name: 'Badge', revision: 1, config: {} }] : [],
  );
  const body = async (s: { headers: Record<string, string> }) => ((await (await manifest(s)).json()) as any).data;
  const p = await body(plain);
  await body(plain2);
  const a = await body(alerted);
  const b = await body(badged);
  t.equal(shared(plain.screenId), shared(plain2.screenId), 'the plain screens share');
  t.not(shared(alerted.screenId), shared(plain.screenId), 'the alerted screen: its own build');
  t.not(shared(badged.screenId), shared(plain.screenId), 'the badged screen: its own build');
  t.match(a.timeline[0], { source: { type: 'alert', id: 'alert-1' }, message: { text: 'Storm' } });
  t.same(
    b.overlays.map((o: any) => o.instanceId),
    ['badge-1'],
  );
  t.equal(p.timeline[0].source.type, 'group-assignment');
  t.same(p.overlays, [], 'nothing of theirs on the plain screens');
});
