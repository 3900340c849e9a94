import sharp from 'sharp';
import t from 'tap';
import { ManifestDto } from '../server/src/modules/content/manifest.routes.js';
import { signedInApp } from './helpers/auth.js';
import { settledAsset, sha256, uploadAsset } from './helpers/media.js';
import { openSocket, pairScreen } from './helpers/screens.js';

type Socket = Awaited<ReturnType<typeof openSocket>>;
/** Waits for a `manifest.changed` that arrives after this call (the messages so far are skipped). */
function changed(s: Socket) {
  const seen = s.messages.length;
  const since = Date.now();
  return () => s.next((m) => m.type === 'manifest.changed' && s.messages.indexOf(m) >= seen, since, 5000);
}

const png = (color: string, width = 600, height = 300) =>
  sharp({ create: { width, height, channels: 3, background: color } })
    .png()
    .toBuffer();

t.test('overlays in the manifest: reached via group, location, screen or all; the logo cached; changes pushed', async (t) => {
  const { app, owner, call } = await signedInApp(t);
  for (const p of ['countdown-bar', 'brand-bug', 'noise-meter']) t.equal((await call('POST', `/api/v1/plugins/${p}/install`)).status, 200);
  const group = (await call('POST', '/api/v1/screen-groups', { name: 'Class rooms' })).body.data.id as string;
  const location = (await call('POST', '/api/v1/locations', { name: 'Paris', timeZone: 'Europe/Paris' })).body.data.id as string;
  const inGroup = await pairScreen(app, owner, { name: 'Room 1', groupIds: [group] });
  const atLocation = await pairScreen(app, owner, { name: 'Paris hall', locationId: location });
  const direct = await pairScreen(app, owner, { name: 'Reception' });
  const other = await pairScreen(app, owner, { name: 'Elsewhere' });
  const manifest = async (s: { headers: { authorization: string } }) => {
    const res = await app.json('/api/v1/player/manifest', { headers: s.headers });
    t.equal(res.status, 200);
    t.ok(ManifestDto.safeParse(res.body.data).success, 'the manifest matches its schema');
    return res.body.data;
  };
  const logo = await settledAsset(app, owner, (await uploadAsset(app, owner, await png('#2050c0'), 'logo.png')).id);
  t.equal(logo.state, 'ready');

  const create = async (plugin: string, body: unknown) => {
    const res = await call('POST', `/api/v1/plugins/${plugin}/instances`, body);
    t.equal(res.status, 201, `${plugin} instance created`);
    return res.body.data;
  };
  const noise = await create('noise-meter', { name: 'Room noise', targets: { groupIds: [group] }, config: { warningLevel: 55, loudLevel: 70 } });
  const countdown = await create('countdown-bar', {
    name: 'Closing',
    targets: { locationIds: [location], screenIds: [direct.screenId] },
    config: { target: { type: 'daily', time: '18:00' }, label: 'Closing soon' },
  });
  const bug = await create('brand-bug', { name: 'Logo', targets: { all: true }, config: { assetId: logo.id, corner: 'bottom-left', sizePct: 10 } });

  const ids = (m: any) => m.overlays.map((o: any) => o.instanceId);
  const g = await manifest(inGroup);
  t.same(ids(g), [bug.id, noise.id], 'the group screen: brand bug (all) then noise meter (its group), by pluginId');
  t.match(g.overlays[1], { pluginId: 'noise-meter', name: 'Room noise', revision: 1, config: { warningLevel: 55, loudLevel: 70, display: 'bar' } });
  t.equal(g.overlays[1].logo, undefined);
  const l = await manifest(atLocation);
  t.equal(l.timeZone, 'Europe/Paris');
  t.same(ids(l), [bug.id, countdown.id], 'the location screen: brand bug, countdown');
  t.match(l.overlays[1].config, { target: { type: 'daily', time: '18:00' }, label: 'Closing soon', windowMin: 60 });
  t.same(ids(await manifest(direct)), [bug.id, countdown.id], 'the screen named directly');
  const o = await manifest(other);
  t.same(ids(o), [bug.id], 'a screen reached only by all');

  // The logo: in media[] and downloadable with the device credential, hashing to its sha256.
  const entry = o.overlays[0];
  t.match(entry, { pluginId: 'brand-bug', config: { assetId: logo.id, corner: 'bottom-left', sizePct: 10, opacity: 0.85 }, logo: { assetId: logo.id } });
  const media = o.media.find((m: any) => m.variantId === entry.logo.variantId);
  t.ok(media, 'the logo variant is in media[]');
  t.match(media, { assetId: logo.id, purpose: 'player', url: entry.logo.url, sha256: entry.logo.sha256 });
  const dl = await app.fetch(entry.logo.url, { headers: other.headers });
  t.equal(dl.status, 200, 'downloads with the device credential');
  const bytes = Buffer.from(await dl.arrayBuffer());
  t.equal(sha256(bytes), entry.logo.sha256, 'hashes to its sha256');
  t.equal(bytes.length, entry.logo.sizeBytes);
  t.equal(dl.headers.get('content-type'), entry.logo.contentType);

  // An SVG logo is delivered as its rendered player variant.
  const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="200" height="100"><rect width="200" height="100" fill="#c02050"/></svg>');
  const vector = await settledAsset(app, owner, (await uploadAsset(app, owner, svg, 'logo.svg')).id);
  t.equal(vector.state, 'ready');
  const svgBug = await create('brand-bug', { name: 'Vector logo', targets: { screenIds: [direct.screenId] }, config: { assetId: vector.id } });
  const d = await manifest(direct);
  const svgEntry = d.overlays.find((x: any) => x.instanceId === svgBug.id);
  t.match(svgEntry, { logo: { assetId: vector.id, contentType: /^image\// } });
  t.ok(
    d.media.some((m: any) => m.variantId === svgEntry.logo.variantId),
    'the SVG logo’s variant is in media[]',
  );
  t.equal((await call('DELETE', `/api/v1/plugins/brand-bug/instances/${svgBug.id}`)).status, 204);

  // An instance change bumps the reached screens and pushes manifest.changed.
  const socket = await openSocket(t, app, inGroup.credential);
  const otherSocket = await openSocket(t, app, other.credential);
  const groupChanged = changed(socket);
  const put = await call('PUT', `/api/v1/plugins/noise-meter/instances/${noise.id}`, {
    name: 'Room noise',
    targets: { groupIds: [group] },
    config: { warningLevel: 50, loudLevel: 65, display: 'traffic-light' },
  });
  t.equal(put.status, 200, 'edited');
  await groupChanged();
  const g2 = await manifest(inGroup);
  t.ok(g2.revision > g.revision, 'the manifest revision moved');
  t.match(g2.overlays[1], { revision: 2, config: { display: 'traffic-light', loudLevel: 65 } });
  t.notOk(
    otherSocket.messages.some((m) => m.type === 'manifest.changed'),
    'a screen the instance does not reach is not told',
  );

  // Moving the instance to another target tells the screens before and after.
  const [leftGroup, reachedOther] = [changed(socket), changed(otherSocket)];
  t.equal(
    (await call('PUT', `/api/v1/plugins/noise-meter/instances/${noise.id}`, { name: 'Room noise', targets: { screenIds: [other.screenId] }, config: {} }))
      .status,
    200,
  );
  await leftGroup();
  await reachedOther();
  t.same(ids(await manifest(inGroup)), [bug.id], 'left the group screen');
  t.same(ids(await manifest(other)), [bug.id, noise.id], 'reached the named screen');

  // Uninstalling takes the instances off the screens (kept stored); reinstalling brings them back.
  const uninstalled = changed(otherSocket);
  t.equal((await call('DELETE', '/api/v1/plugins/noise-meter/installation')).status, 204);
  await uninstalled();
  t.same(ids(await manifest(other)), [bug.id], 'not delivered while uninstalled');
  t.equal((await call('POST', '/api/v1/plugins/noise-meter/install')).status, 200);
  t.same(ids(await manifest(other)), [bug.id, noise.id], 'delivered again');

  // The logo asset: deleting it is refused while a brand bug shows it; forced, the overlay leaves with a warning.
  const refused = await call('DELETE', `/api/v1/assets/${logo.id}`);
  t.equal(refused.status, 409);
  t.match(refused.body.error.details.usedBy, [{ type: 'brand-bug', id: bug.id, name: 'Logo' }]);
  const assetGone = changed(otherSocket);
  t.equal((await call('DELETE', `/api/v1/assets/${logo.id}?force=true`)).status, 204);
  await assetGone();
  const gone = await manifest(other);
  t.same(ids(gone), [noise.id], 'the brand bug is left out');
  t.match(gone.warnings, [{ code: 'asset_missing', assetId: logo.id, pluginId: 'brand-bug', instanceId: bug.id }]);
  t.notOk(
    gone.media.some((m: any) => m.assetId === logo.id),
    'its variant is not in media[]',
  );
});
