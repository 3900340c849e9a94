import t, { type Test } from 'tap';
import { signedInApp, signIn } from './helpers/auth.js';
import { pairScreen } from './helpers/screens.js';

const ID = '0190f5a2-7b3c-7def-8abc-0123456789ab';
const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();
const soon = { startsAt: iso(Date.now() - HOUR), endsAt: iso(Date.now() + 24 * HOUR) };

async function setup(t: Test) {
  const { app, owner, call } = await signedInApp(t);
  let site: string | undefined;
  const playlist = async (name: string) => {
    site ??= (await call('POST', '/api/v1/assets/websites', { url: 'https://example.org/', name: 'Site' })).body.data.id as string;
    const res = await call('POST', '/api/v1/playlists', { name, items: [{ assetId: site }] });
    if (res.status !== 201) throw new Error(JSON.stringify(res.body));
    return res.body.data.id as string;
  };
  const layout = async (name: string, playlistId: string) => {
    const res = await call('POST', '/api/v1/layouts', {
      name,
      width: 1920,
      height: 1080,
      zones: [{ id: 'main', name: 'Main', x: 0, y: 0, width: 1920, height: 1080, content: { type: 'playlist', playlistId } }],
    });
    if (res.status !== 201) throw new Error(JSON.stringify(res.body));
    return res.body.data.id as string;
  };
  const manifest = async (headers: Record<string, string>) => (await app.json('/api/v1/player/manifest', { headers })).body.data;
  return { app, owner, call, playlist, layout, manifest };
}

t.test('create, read, list, patch the draft; bad input is refused', async (t) => {
  const { call, playlist } = await setup(t);
  const p = await playlist('Promo');
  const made = await call('POST', '/api/v1/campaigns', { name: 'Summer', show: { type: 'playlist', id: p } });
  t.equal(made.status, 201);
  const id = made.body.data.id;
  t.match(made.body.data, {
    name: 'Summer',
    revision: 1,
    publication: null,
    unpublishedChanges: true,
    draft: { show: { type: 'playlist', id: p }, content: [], placements: [] },
  });
  t.equal(made.headers.get('etag'), '"1"');
  t.equal((await call('GET', `/api/v1/campaigns/${id}`)).body.data.name, 'Summer');
  t.equal((await call('GET', '/api/v1/campaigns')).body.data.items.length, 1);

  const patched = await call('PATCH', `/api/v1/campaigns/${id}/draft`, { window: soon, description: 'Sun' }, { 'if-match': '1' });
  t.equal(patched.status, 200);
  t.match(patched.body.data, { revision: 2, description: 'Sun', draft: { window: soon, show: { id: p } } });
  t.equal((await call('PATCH', `/api/v1/campaigns/${id}/draft`, { description: 'x' }, { 'if-match': '1' })).status, 412, 'stale If-Match');

  const bad: [string, unknown, number, RegExp | string][] = [
    ['unknown show', { show: { type: 'layout', id: ID } }, 400, 'invalid_reference'],
    ['unknown content', { content: [{ type: 'widget', id: ID }] }, 400, 'invalid_reference'],
    ['unknown target', { placements: [{ targets: { screenIds: [ID] }, priority: 1 }] }, 400, 'invalid_reference'],
    ['window backwards', { window: { startsAt: soon.endsAt, endsAt: soon.startsAt } }, 400, 'validation_failed'],
    ['too many content items', { content: Array.from({ length: 51 }, () => ({ type: 'playlist', id: p })) }, 400, 'validation_failed'],
    ['too many placements', { placements: Array.from({ length: 21 }, () => ({ targets: {}, priority: 0 })) }, 400, 'validation_failed'],
  ];
  for (const [label, body, status, code] of bad) {
    const res = await call('PATCH', `/api/v1/campaigns/${id}/draft`, body);
    t.equal(res.status, status, label);
    if (code === 'invalid_reference') t.match(res.body.error, { code: 'validation_failed', details: { issues: [{ code: 'invalid_reference' }] } }, label);
    else t.equal(res.body.error.code, code, label);
  }
  t.equal((await call('GET', `/api/v1/campaigns/${id}`)).body.data.revision, 2, 'nothing stored by refused patches');
  t.equal((await call('POST', '/api/v1/campaigns', { name: '' })).status, 400);
  t.match((await call('POST', '/api/v1/campaigns', { name: 'X', show: { type: 'playlist', id: ID } })).body.error.details.issues, [
    { path: ['show', 'id'], code: 'invalid_reference' },
  ]);
  t.equal((await call('GET', `/api/v1/campaigns/${ID}`)).status, 404);
  // A schedule may now show a campaign that exists.
  const sched = await call('POST', '/api/v1/schedules', { name: 'S', content: { campaignId: ID }, targets: { screenIds: [ID] }, startsAt: soon.startsAt });
  t.match(sched.body.error.details.issues, [{ path: ['content', 'campaignId'], code: 'invalid_reference' }]);
  t.match(sched.body.error.message, /No campaign/);
});

t.test('preflight names each problem', async (t) => {
  const { app, owner, call, playlist, layout } = await setup(t);
  const screen = await pairScreen(app, owner, { name: 'Lobby' });
  const codes = async (id: string) => {
    const res = await call('GET', `/api/v1/campaigns/${id}/preflight`);
    t.equal(res.status, 200);
    return { ok: res.body.data.ok, errors: res.body.data.errors.map((e: any) => e.code), warnings: res.body.data.warnings.map((w: any) => w.code) };
  };
  const p = await playlist('P');
  const empty = (await call('POST', '/api/v1/campaigns', { name: 'Empty' })).body.data.id;
  const e = await codes(empty);
  t.equal(e.ok, false);
  t.ok(e.errors.includes('no_window') && e.errors.includes('no_show'), 'no window, no show');
  t.ok(e.warnings.includes('no_placements'));

  const past = (
    await call('POST', '/api/v1/campaigns', {
      name: 'Past',
      show: { type: 'playlist', id: p },
      window: { startsAt: iso(Date.now() - 48 * HOUR), endsAt: iso(Date.now() - 24 * HOUR) },
    })
  ).body.data.id;
  t.ok((await codes(past)).errors.includes('window_past'));
  const refused = await call('POST', `/api/v1/campaigns/${past}/publish`, {});
  t.equal(refused.status, 409, 'a window that has ended is not released');
  t.match(refused.body.error.message, /window ended/);
  t.equal((await call('GET', `/api/v1/campaigns/${past}/releases`)).body.data.items.length, 0, 'no release made');

  // Content and a target deleted after they were put in the draft.
  const gone = await playlist('Gone');
  const l = await layout('L', p);
  const full = (
    await call('POST', '/api/v1/campaigns', {
      name: 'Full',
      window: soon,
      show: { type: 'layout', id: l },
      content: [{ type: 'playlist', id: gone }],
      placements: [{ targets: { screenIds: [screen.screenId] }, priority: 1 }],
    })
  ).body.data.id;
  // Another screen-stronger schedule over the window.
  t.equal(
    (
      await call('POST', '/api/v1/schedules', {
        name: 'Strong',
        content: { playlistId: p },
        targets: { screenIds: [screen.screenId] },
        startsAt: soon.startsAt,
        priority: 50,
      })
    ).status,
    201,
  );
  await app.deps.db
    .updateTable('screens')
    .set({ last_seen_ms: Date.now() - 3 * 24 * HOUR })
    .where('id', '=', screen.screenId)
    .execute();
  await app.deps.db.deleteFrom('playlists').where('id', '=', gone).execute();
  const f = await codes(full);
  t.same(f.errors, ['content_missing'], 'the deleted playlist is the only error');
  t.ok(f.warnings.includes('unpublished_changes'), 'the layout has unpublished changes');
  t.ok(f.warnings.includes('target_offline'), 'the screen was last seen days ago');
  t.ok(f.warnings.includes('outranked'), 'a stronger schedule hides it');
  t.notOk(f.warnings.includes('not_approved'), 'approvals are off');
  await call('PATCH', '/api/v1/settings', { approvals: { required: true } });
  t.ok((await codes(full)).warnings.includes('not_approved'), 'with approvals on');

  await app.deps.db.deleteFrom('screens').where('id', '=', screen.screenId).execute();
  t.ok((await codes(full)).errors.includes('target_missing'), 'a deleted screen');
  // Asset not ready.
  const site = (await call('GET', `/api/v1/playlists/${p}`)).body.data.items[0].assetId;
  await app.deps.db.updateTable('assets').set({ state: 'processing' }).where('id', '=', site).execute();
  const withAsset = (await call('POST', '/api/v1/campaigns', { name: 'A', window: soon, show: { type: 'playlist', id: p } })).body.data.id;
  t.ok((await codes(withAsset)).warnings.includes('asset_not_ready'));
});

t.test('preflight follows layouts, groups, recurrences, approvals and the screens’ free cache', async (t) => {
  const { app, owner, call, playlist, layout } = await setup(t);
  const lobby = await pairScreen(app, owner, { name: 'Lobby' });
  const hall = await pairScreen(app, owner, { name: 'Hall' });
  const findings = async (id: string) => (await call('GET', `/api/v1/campaigns/${id}/preflight`)).body.data.warnings as any[];
  const codes = async (id: string) => (await findings(id)).map((w) => w.code);
  const p = await playlist('Inner');
  const l = await layout('Board', p);
  const site = (await call('GET', `/api/v1/playlists/${p}`)).body.data.items[0].assetId;
  await app.deps.db
    .updateTable('assets')
    .set({ size_bytes: 300 * 1024 * 1024 })
    .where('id', '=', site)
    .execute();
  const id = (
    await call('POST', '/api/v1/campaigns', {
      name: 'Promo',
      window: soon,
      show: { type: 'layout', id: l },
      placements: [{ targets: { screenIds: [lobby.screenId, hall.screenId] }, priority: 5 }],
    })
  ).body.data.id;

  // Media reached through the layout's zone playlist.
  await app.deps.db.updateTable('assets').set({ state: 'processing' }).where('id', '=', site).execute();
  t.match(
    (await findings(id)).filter((w) => w.code === 'asset_not_ready'),
    [{ assetId: site, playlistId: p }],
    'an asset in a playlist of the layout',
  );
  await app.deps.db.updateTable('assets').set({ state: 'ready' }).where('id', '=', site).execute();
  t.notOk((await codes(id)).includes('asset_not_ready'));

  // Free cache: never reported, too small, enough.
  t.match(
    (await findings(id)).find((w) => w.code === 'cache_unknown'),
    { screens: ['Hall', 'Lobby'] },
    'neither screen said',
  );
  const beat = (screen: typeof lobby, freeBytes: unknown) =>
    app.json('/api/v1/player/heartbeat', { method: 'POST', headers: screen.headers, json: { storage: { freeBytes, totalBytes: 1e9 } } });
  t.equal((await beat(lobby, 100 * 1024 * 1024)).status, 200);
  t.equal((await beat(hall, 2 * 1024 * 1024 * 1024)).status, 200);
  const small = (await findings(id)).filter((w) => w.code.startsWith('cache_'));
  t.match(small, [{ code: 'cache_too_small', screenId: lobby.screenId, freeBytes: 100 * 1024 * 1024, mediaBytes: 300 * 1024 * 1024 }], 'Lobby has too little');
  t.match(small[0].message, /Lobby.*100 MiB.*300 MiB/);
  t.equal((await beat(lobby, 'lots')).status, 200);
  t.match(
    (await findings(id)).find((w) => w.code === 'cache_unknown'),
    { screens: ['Lobby'] },
    'a bad figure counts as not said',
  );

  // A stronger schedule through a group; a recurring one with no occurrence in the window; a weaker one.
  const group = (await call('POST', '/api/v1/screen-groups', { name: 'Front' })).body.data.id;
  t.equal((await call('POST', `/api/v1/screen-groups/${group}/screens`, { screenIds: [hall.screenId] })).status, 200);
  const schedule = async (name: string, extra: Record<string, unknown>) => {
    const res = await call('POST', '/api/v1/schedules', { name, content: { playlistId: p }, timeZone: 'UTC', ...extra });
    if (res.status !== 201) throw new Error(JSON.stringify(res.body));
    return res.body.data.id as string;
  };
  const viaGroup = await schedule('Via group', { targets: { groupIds: [group] }, startsAt: soon.startsAt, priority: 9 });
  const monthAgo = new Date(Date.now() - 30 * 24 * HOUR);
  await schedule('Yearly', {
    targets: { screenIds: [lobby.screenId] },
    startsAt: iso(monthAgo.getTime()),
    endsAt: iso(monthAgo.getTime() + HOUR),
    rrule: 'FREQ=YEARLY',
    priority: 9,
  });
  await schedule('Weaker', { targets: { screenIds: [lobby.screenId] }, startsAt: soon.startsAt, priority: 5 });
  t.match(
    (await findings(id)).filter((w) => w.code === 'outranked'),
    [{ scheduleId: viaGroup, screenIds: [hall.screenId] }],
    'only the group-targeted one that plays in the window and outranks the placement',
  );

  // Approvals: an approved submission of the layout's draft at its revision is approved.
  t.equal((await call('PATCH', '/api/v1/settings', { approvals: { required: true, allowSelfApproval: true } })).status, 200);
  t.ok((await codes(id)).includes('not_approved'), 'the layout draft is not approved yet');
  const sub = (await call('POST', `/api/v1/content-submissions/layout/${l}`, { message: 'board' })).body.data.id;
  t.equal((await call('POST', `/api/v1/content-submissions/${sub}/approve`, {})).status, 200);
  const after = await codes(id);
  t.notOk(after.includes('not_approved'), 'approved: no warning');
  t.ok(after.includes('unpublished_changes'), 'still unpublished');
});

t.test('publish releases the content and places it: the screen plays the show, the campaign named', async (t) => {
  const { app, owner, call, playlist, layout, manifest } = await setup(t);
  const screen = await pairScreen(app, owner, { name: 'Lobby' });
  const p = await playlist('P');
  const l = await layout('L', p);
  const id = (
    await call('POST', '/api/v1/campaigns', {
      name: 'Launch',
      window: soon,
      show: { type: 'layout', id: l },
      placements: [{ name: 'Lobby', targets: { screenIds: [screen.screenId] }, priority: 5 }],
    })
  ).body.data.id;
  t.equal((await manifest(screen.headers)).timeline[0].campaign, null, 'nothing before the release');

  const editor = await signIn(app, { role: 'editor' });
  t.equal((await app.json(`/api/v1/campaigns/${id}/publish`, { method: 'POST', headers: editor.headers, json: {} })).status, 403, 'editors do not publish');
  const pub = await call('POST', `/api/v1/campaigns/${id}/publish`, { note: 'go' });
  t.equal(pub.status, 201, JSON.stringify(pub.body));
  t.match(pub.body.data, { number: 1, note: 'go', snapshot: { show: { id: l }, published: [{ type: 'layout', id: l, number: 1 }] } });
  const lay = (await call('GET', `/api/v1/layouts/${l}`)).body.data;
  t.equal(lay.hasUnpublishedChanges, false, 'the layout was published by the release');
  const revs = await app.deps.db.selectFrom('layout_revisions').select('source').where('layout_id', '=', l).execute();
  t.same(revs, [{ source: 'campaign' }], 'one publication, made by the campaign');

  const scheds = (await call('GET', `/api/v1/schedules?screenId=${screen.screenId}`)).body.data.items;
  t.equal(scheds.length, 1);
  t.match(scheds[0], { name: 'Lobby', content: { type: 'campaign', id, name: 'Launch' }, priority: 5, startsAt: soon.startsAt });

  const m = await manifest(screen.headers);
  const entry = m.timeline.find((e: any) => e.campaign);
  t.ok(entry, 'a timeline entry names the campaign');
  t.match(entry, { campaign: { id, name: 'Launch' }, content: { type: 'layout', id: l }, source: { type: 'schedule', id: scheds[0].id } });

  const preview = await call('POST', '/api/v1/schedules/preview', { screenId: screen.screenId, from: iso(Date.now()), to: iso(Date.now() + HOUR) });
  t.equal(preview.body.data.timeline[0].source.campaignId, id, 'the preview names it too');
  t.match((await call('GET', `/api/v1/campaigns/${id}`)).body.data, { publication: { number: 1 }, unpublishedChanges: false });

  // A second release replaces the owned schedules, not adds to them.
  await call('PATCH', `/api/v1/campaigns/${id}/draft`, { placements: [{ targets: { screenIds: [screen.screenId] }, priority: 7 }] });
  t.equal((await call('GET', `/api/v1/campaigns/${id}`)).body.data.unpublishedChanges, true);
  t.equal((await call('POST', `/api/v1/campaigns/${id}/publish`, {})).status, 201);
  const again = (await call('GET', `/api/v1/schedules?screenId=${screen.screenId}`)).body.data.items;
  t.equal(again.length, 1);
  t.equal(again[0].priority, 7);

  // Releases, newest first; restore the first.
  const releases = (await call('GET', `/api/v1/campaigns/${id}/releases`)).body.data.items;
  t.same(
    releases.map((r: any) => r.number),
    [2, 1],
  );
  const before = (await call('GET', `/api/v1/campaigns/${id}`)).body.data.revision;
  const restored = await call('POST', `/api/v1/campaigns/${id}/releases/${releases[1].id}/restore`, {}, { 'if-match': String(before) });
  t.equal(restored.status, 200);
  t.match(restored.body.data, { revision: before + 1, unpublishedChanges: true, draft: { placements: [{ priority: 5 }] } });
  t.equal((await call('POST', `/api/v1/campaigns/${id}/releases/${ID}/restore`, {})).status, 404);

  // Deleting it ends its schedules: the screen no longer plays it.
  const rev = (await call('GET', `/api/v1/campaigns/${id}`)).body.data.revision;
  t.equal((await call('DELETE', `/api/v1/campaigns/${id}`, undefined, { 'if-match': String(rev - 1) })).status, 412);
  t.equal((await call('DELETE', `/api/v1/campaigns/${id}`, undefined, { 'if-match': String(rev) })).status, 204);
  t.equal((await call('GET', `/api/v1/schedules?screenId=${screen.screenId}`)).body.data.items.length, 0);
  t.notOk(
    (await manifest(screen.headers)).timeline.some((e: any) => e.campaign),
    'the manifest no longer has it',
  );
});

t.test('a release is all or nothing', async (t) => {
  const { app, owner, call, playlist, layout } = await setup(t);
  const screen = await pairScreen(app, owner, { name: 'Lobby' });
  const p = await playlist('P');
  const doomed = await playlist('Doomed');
  const good = await layout('Good', p);
  const bad = await layout('Bad', doomed);
  const id = (
    await call('POST', '/api/v1/campaigns', {
      name: 'Both',
      window: soon,
      show: { type: 'layout', id: good },
      content: [{ type: 'layout', id: bad }],
      placements: [{ targets: { screenIds: [screen.screenId] }, priority: 1 }],
    })
  ).body.data.id;
  await app.deps.db.deleteFrom('playlists').where('id', '=', doomed).execute();
  const res = await call('POST', `/api/v1/campaigns/${id}/publish`, {});
  t.equal(res.status, 409);
  t.equal(res.body.error.code, 'conflict');
  t.match(res.body.error.message, /Bad/);
  for (const l of [good, bad]) t.equal((await call('GET', `/api/v1/layouts/${l}/revisions`)).body.data.items.length, 0, 'no layout got a publication');
  t.equal((await call('GET', '/api/v1/schedules')).body.data.items.length, 0, 'no schedule made');
  t.equal((await call('GET', `/api/v1/campaigns/${id}/releases`)).body.data.items.length, 0);
  t.equal((await call('GET', `/api/v1/campaigns/${id}`)).body.data.publication, null);
  // A target deleted since: rolled back too.
  const ok = (
    await call('POST', '/api/v1/campaigns', {
      name: 'T',
      window: soon,
      show: { type: 'layout', id: good },
      placements: [{ targets: { screenIds: [screen.screenId] }, priority: 1 }],
    })
  ).body.data.id;
  await app.deps.db.deleteFrom('screens').where('id', '=', screen.screenId).execute();
  t.equal((await call('POST', `/api/v1/campaigns/${ok}/publish`, {})).status, 409);
  t.equal((await call('GET', `/api/v1/layouts/${good}/revisions`)).body.data.items.length, 0);
});

t.test('approvals on: no direct publish; an editor may not delete a released campaign', async (t) => {
  const { app, call, playlist } = await setup(t);
  const p = await playlist('P');
  const id = (await call('POST', '/api/v1/campaigns', { name: 'C', window: soon, show: { type: 'playlist', id: p } })).body.data.id;
  t.equal((await call('POST', `/api/v1/campaigns/${id}/publish`, {})).status, 201, 'released while approvals are off');
  t.equal((await call('PATCH', '/api/v1/settings', { approvals: { required: true } })).status, 200);
  const res = await call('POST', `/api/v1/campaigns/${id}/publish`, {});
  t.equal(res.status, 409);
  t.match(res.body.error.message, /content-submissions\/campaign\//);
  const editor = await signIn(app, { role: 'editor' });
  const del = await app.json(`/api/v1/campaigns/${id}`, { method: 'DELETE', headers: editor.headers });
  t.equal(del.status, 403);
  t.match(del.body.error.message, /publisher/);
  const draftOnly = (await call('POST', '/api/v1/campaigns', { name: 'D' })).body.data.id;
  t.equal(
    (await app.json(`/api/v1/campaigns/${draftOnly}`, { method: 'DELETE', headers: editor.headers })).status,
    204,
    'a never-released one is the editor’s to delete',
  );
  t.equal((await call('DELETE', `/api/v1/campaigns/${id}`)).status, 204, 'a publisher may');
});

t.test('campaignPublishable: state, publish (a submission’s path), publications, restoreDraft', async (t) => {
  const { campaignPublishable } = await import('../server/src/modules/campaigns/index.js');
  const { app, owner, call, playlist } = await setup(t);
  const p = await playlist('P');
  const id = (await call('POST', '/api/v1/campaigns', { name: 'C', window: soon, show: { type: 'playlist', id: p } })).body.data.id;
  const db = app.deps.db;
  const state = await campaignPublishable.state(db, id);
  t.match(state, { name: 'C', revision: 1, published: null, unpublishedChanges: true, draft: { show: { id: p } } });
  const pub = await db.transaction().execute((trx) => campaignPublishable.publish(trx, id, state.draft, owner.user.id, 'approved', 'submission'));
  t.match(pub, { number: 1, source: 'submission', publishedBy: owner.user.id });
  t.match(await campaignPublishable.state(db, id), { published: { id: pub.id }, unpublishedChanges: false });
  const page = await campaignPublishable.publications(db, id, { limit: 10 });
  t.same(
    page.items.map((i) => i.id),
    [pub.id],
  );
  const one = await campaignPublishable.publication(db, id, pub.id);
  t.match(one?.snapshot, { show: { id: p }, published: [{ type: 'playlist', id: p, publicationId: String, number: 1 }] }); // the playlist's publication the release carries
  await app.deps.db.deleteFrom('playlists').where('id', '=', p).execute();
  await t.rejects(
    db.transaction().execute((trx) => campaignPublishable.restoreDraft(trx, id, one!.snapshot)),
    { code: 'conflict' },
    'a release naming a deleted playlist is not restored',
  );
  await t.rejects(
    db.transaction().execute((trx) => campaignPublishable.publish(trx, id, one!.snapshot, null, '', 'rollback')),
    { code: 'conflict' },
  );
  t.equal((await campaignPublishable.publications(db, id, { limit: 10 })).items.length, 1, 'the refused one left nothing');
  t.same(Object.keys(campaignPublishable.comparable(one!.snapshot).fields), ['name', 'description', 'window', 'show']);
});
