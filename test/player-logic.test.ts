/**
 * The browser player's pure logic (console/src/player), imported directly: pairing state
 * machine, backoff, heartbeat document, manifest reading, timeline and day-parts in the
 * screen's time zone, playlist sequencing, cache plan, layout geometry, commands.
 */
import t from 'tap';
import { Backoff, retryDelayMs } from '../console/src/player/backoff.js';
import { buildHeartbeat, heartbeatIntervalMs, playerFamilyFromSearch } from '../console/src/player/identity.js';
import { formatPairingCode, INITIAL_PAIRING, pairingStep, secondsLeft, type PairingState } from '../console/src/player/pairing.js';
import { mediaForItem, readManifest } from '../console/src/player/manifest.js';
import {
  itemDurationMs,
  itemPlayableAt,
  localClock,
  nextBoundary,
  PlaylistSequencer,
  segmentAt,
  segmentKey,
  segmentToShow,
} from '../console/src/player/schedule.js';
import { cacheKey, isMediaPath, planCache, verifyDownload, toHex } from '../console/src/player/cache-plan.js';
import { fitCanvas, zoneRect } from '../console/src/player/geometry.js';
import { commandAction, commandExpired, SeenCommands } from '../console/src/player/commands.js';
import { PlayerStorage } from '../console/src/player/storage.js';
import { closeAction, parseSocketMessage, socketProtocols, socketUrl } from '../console/src/player/socket-messages.js';
import { PlayerApiError } from '../console/src/player/protocol.js';

const session = (over: Partial<{ expiresAt: string; pollIntervalSec: number }> = {}) => ({
  id: '018f0000-0000-7000-8000-000000000001',
  code: 'K7QX2M',
  pollSecret: 's3cret',
  expiresAt: over.expiresAt ?? new Date(Date.now() + 15 * 60_000).toISOString(),
  pollIntervalSec: over.pollIntervalSec ?? 3,
});

t.test('pairing: code shown, polled, approved, enrolled, credential stored', async (t) => {
  let tr = pairingStep(INITIAL_PAIRING, { type: 'session-created', session: session() });
  t.equal(tr.state.kind, 'showing-code');
  t.same(tr.effect, { type: 'poll', afterMs: 3000 });
  tr = pairingStep(tr.state, { type: 'polled', poll: { id: 'x', status: 'pending' }, now: Date.now() });
  t.equal(tr.state.kind, 'showing-code');
  t.equal(tr.effect.type, 'poll');
  tr = pairingStep(tr.state, { type: 'polled', poll: { id: 'x', status: 'approved', enrollmentToken: 'tok' }, now: Date.now() });
  t.equal(tr.state.kind, 'enrolling');
  t.same(tr.effect, { type: 'enroll', enrollmentToken: 'tok' });
  tr = pairingStep(tr.state, { type: 'enrolled', screenId: 'sid', credential: 'svc_device_a.b' });
  t.same(tr.state, { kind: 'enrolled', screenId: 'sid', credential: 'svc_device_a.b' });
  t.same(tr.effect, { type: 'store-credential', screenId: 'sid', credential: 'svc_device_a.b' });
});

t.test('pairing: rejection, expiry and lost sessions start a new code; network errors keep it', async (t) => {
  const showing = pairingStep(INITIAL_PAIRING, { type: 'session-created', session: session() }).state;
  for (const status of ['rejected', 'expired', 'enrolled'] as const) {
    const tr = pairingStep(showing, { type: 'polled', poll: { id: 'x', status }, now: Date.now() });
    t.equal(tr.state.kind, 'starting', status);
    t.same(tr.effect, { type: 'create-session' }, status);
  }
  // Approved without a token is still pending (never enrol with nothing).
  t.equal(pairingStep(showing, { type: 'polled', poll: { id: 'x', status: 'approved' }, now: Date.now() }).effect.type, 'poll');
  // The clock passes expiresAt while the server is unreachable.
  const old = pairingStep(INITIAL_PAIRING, { type: 'session-created', session: session({ expiresAt: new Date(Date.now() - 1000).toISOString() }) }).state;
  t.equal(pairingStep(old, { type: 'tick', now: Date.now() }).effect.type, 'create-session');
  t.equal(pairingStep(showing, { type: 'tick', now: Date.now() }).effect.type, 'none');
  t.equal(pairingStep(showing, { type: 'failed', message: 'offline', restart: false }).effect.type, 'poll');
  t.equal(pairingStep(showing, { type: 'failed', message: 'gone', restart: true }).effect.type, 'create-session');
  const enrolling: PairingState = { kind: 'enrolling', session: session(), enrollmentToken: 'tok' };
  t.equal(pairingStep(enrolling, { type: 'failed', message: 'token used', restart: false }).effect.type, 'create-session');
  // A stale poll answer after the state moved on is ignored.
  t.equal(pairingStep(enrolling, { type: 'polled', poll: { id: 'x', status: 'pending' }, now: Date.now() }).effect.type, 'none');
  // Poll interval is bounded.
  t.same(pairingStep(INITIAL_PAIRING, { type: 'session-created', session: session({ pollIntervalSec: 0 }) }).effect, { type: 'poll', afterMs: 3000 });
  t.same(pairingStep(INITIAL_PAIRING, { type: 'session-created', session: session({ pollIntervalSec: 600 }) }).effect, { type: 'poll', afterMs: 30000 });
});

t.test('pairing code formatting and countdown', async (t) => {
  t.equal(formatPairingCode('k7qx2m'), 'K7Q-X2M');
  t.equal(formatPairingCode('K7Q-X2M'), 'K7Q-X2M');
  t.equal(formatPairingCode('ABCD'), 'ABCD');
  const s = session({ expiresAt: new Date(100_000).toISOString() });
  t.equal(secondsLeft(s, 40_500), 59);
  t.equal(secondsLeft(s, 200_000), 0);
});

t.test('backoff grows, is jittered within [ceiling/2, ceiling], caps and resets', async (t) => {
  const b = new Backoff({ baseMs: 1000, maxMs: 8000, random: () => 1 });
  t.same([b.next(), b.next(), b.next(), b.next(), b.next()], [1000, 2000, 4000, 8000, 8000]);
  t.equal(b.failures, 5);
  b.reset();
  t.equal(b.next(), 1000);
  const low = new Backoff({ baseMs: 1000, random: () => 0 });
  t.equal(low.next(), 500);
  t.equal(retryDelayMs(new Backoff({ baseMs: 1000, random: () => 0 }), 30), 30_000, 'Retry-After wins when longer');
  t.equal(retryDelayMs(new Backoff({ baseMs: 1000, random: () => 1 }), null), 1000);
});

t.test('player family: desktop-linux only with the kiosk flag, absent otherwise', async (t) => {
  t.equal(playerFamilyFromSearch('?kiosk=1'), 'desktop-linux');
  t.equal(playerFamilyFromSearch('kiosk=true&x=1'), 'desktop-linux');
  t.equal(playerFamilyFromSearch('?kiosk=0'), undefined);
  t.equal(playerFamilyFromSearch(''), undefined);
  t.equal(playerFamilyFromSearch('?kiosk'), undefined);
});

t.test('heartbeat document carries family, version, playback ids and additive status', async (t) => {
  const hb = buildHeartbeat({
    playerFamily: 'desktop-linux',
    nowPlaying: { playlistId: 'p1', itemId: 'i1', assetId: 'a1', scheduleId: null, layoutId: '' },
    manifestRevision: 'r7',
    display: { width: 1920.4, height: 1080 },
    cache: { items: 2, bytes: 10, missing: 0, failed: 0 },
    storage: { quota: 5_000_000.4, usage: 1_000_000 },
    socketConnected: true,
  });
  t.match(hb, {
    playerFamily: 'desktop-linux',
    currentPlaylistId: 'p1',
    currentItemId: 'i1',
    currentAssetId: 'a1',
    manifestRevision: 'r7',
    display: { width: 1920, height: 1080 },
    storage: { freeBytes: 4_000_000, totalBytes: 5_000_000 },
    socketConnected: true,
  });
  t.type(hb.playerVersion, 'string');
  t.notOk('currentScheduleId' in hb);
  t.notOk('currentLayoutId' in hb);
  const web = buildHeartbeat({ nowPlaying: {}, manifestRevision: null });
  t.notOk('playerFamily' in web, 'a plain browser sends no family');
  t.notOk('manifestRevision' in web);
  t.notOk('storage' in web, 'no estimate, no storage');
  t.notOk('storage' in buildHeartbeat({ nowPlaying: {}, manifestRevision: null, storage: { quota: 0, usage: 0 } }), 'a zero quota says nothing');
  t.equal(heartbeatIntervalMs(15), 15_000);
  t.equal(heartbeatIntervalMs(undefined), 30_000);
  t.equal(heartbeatIntervalMs(1), 5_000);
  t.equal(heartbeatIntervalMs(99999), 600_000);
});

const H = 3600_000;
const base = Date.parse('2026-03-07T00:00:00.000Z');
const iso = (t: number) => new Date(t).toISOString();

function sampleManifest() {
  return {
    revision: 12,
    generatedAt: iso(base),
    validUntil: iso(base + 48 * H),
    timeZone: 'Europe/Paris',
    timeline: [
      {
        startsAt: iso(base + 2 * H),
        endsAt: iso(base + 4 * H),
        source: { type: 'schedule', id: 's1' },
        layout: {
          id: 'l1',
          width: 1920,
          height: 1080,
          zones: [
            { id: 'z1', x: 0, y: 0, width: 1280, height: 1080, playlist: { id: 'p2', items: [{ id: 'i3', assetId: 'a1', durationMs: 5000 }] } },
            { id: 'bad', x: 0, y: 0 },
          ],
        },
      },
      {
        startsAt: iso(base),
        endsAt: iso(base + 2 * H),
        source: { type: 'assignment', id: 'asg' },
        playlist: {
          id: 'p1',
          items: [
            { id: 'i1', assetId: 'a1', kind: 'image', durationMs: 4000 },
            { id: 'i2', assetId: 'a2', durationMs: 9000, dayParts: [{ days: [6], start: '09:00', end: '17:00' }] },
            { id: 'w', kind: 'website', url: 'https://example.org/board' },
            'garbage',
          ],
        },
      },
      { startsAt: 'never', endsAt: iso(base) },
    ],
    media: [
      {
        assetId: 'a1',
        variantId: 'v1',
        url: '/api/v1/player/assets/a1/variants/v1',
        contentType: 'image/webp',
        sizeBytes: 100,
        sha256: 'A'.repeat(64),
        width: 1920,
        height: 1080,
      },
      {
        assetId: 'a1',
        variantId: 'v0',
        url: '/api/v1/player/assets/a1/variants/v0',
        contentType: 'image/webp',
        sizeBytes: 50,
        sha256: 'b'.repeat(64),
        width: 960,
        height: 540,
      },
      { assetId: 'a2', variantId: 'v2', url: '/api/v1/player/assets/a2/variants/v2', contentType: 'video/mp4', sizeBytes: 1000, sha256: 'not-a-hash' },
      { url: '/nothing' },
    ],
    overlays: [],
    warnings: [],
  };
}

t.test('manifest reader: segments sorted, content typed, bad entries dropped and reported', async (t) => {
  const m = readManifest(sampleManifest());
  t.equal(m.revision, '12');
  t.equal(m.timeZone, 'Europe/Paris');
  t.equal(m.timeline.length, 2);
  t.equal(m.timeline[0]!.content.type, 'playlist');
  t.equal(m.timeline[1]!.content.type, 'layout');
  const pl = m.timeline[0]!.content.type === 'playlist' ? m.timeline[0]!.content.playlist : null;
  t.same(
    pl?.items.map((i) => [i.id, i.kind]),
    [
      ['i1', 'image'],
      ['i2', 'video'],
      ['w', 'website'],
    ],
    'kind from contentType or url',
  );
  t.equal(pl!.items[2]!.url, 'https://example.org/board');
  const layout = m.timeline[1]!.content.type === 'layout' ? m.timeline[1]!.content.layout : null;
  t.equal(layout?.zones.length, 1, 'a zone without geometry is dropped');
  t.equal(m.media.length, 3);
  t.equal(m.media[0]!.sha256, 'a'.repeat(64), 'sha256 lower-cased');
  t.equal(m.media[2]!.sha256, null, 'a malformed hash is not trusted');
  t.ok(m.problems.length >= 3, m.problems.join('; '));
  t.throws(() => readManifest('nope'));
  t.equal(readManifest({ timeZone: 'Mars/Olympus' }).timeZone, 'UTC', 'unknown zone falls back to UTC');
});

t.test('media for an item: the named variant, else the smallest covering the display', async (t) => {
  const m = readManifest(sampleManifest());
  const item = { ...m.timeline[0]! }.content.type === 'playlist' ? (m.timeline[0]!.content as any).playlist.items[0] : null;
  t.equal(mediaForItem(m, item)?.variantId, 'v1');
  const unnamed = { ...item, variantId: null };
  t.equal(mediaForItem(m, unnamed, { width: 900, height: 500 })?.variantId, 'v0');
  t.equal(mediaForItem(m, unnamed, { width: 1920, height: 1080 })?.variantId, 'v1');
  t.equal(mediaForItem(m, unnamed, { width: 3840, height: 2160 })?.variantId, 'v1', 'largest when none covers');
  t.equal(mediaForItem(m, { ...item, assetId: 'zzz' }), null);
});

t.test('timeline: segment at an instant, boundaries, keys', async (t) => {
  const m = readManifest(sampleManifest());
  t.equal(segmentAt(m.timeline, base - 1), null);
  t.equal(segmentAt(m.timeline, base)?.source.id, 'asg', 'start inclusive');
  t.equal(segmentAt(m.timeline, base + 2 * H)?.source.id, 's1', 'end exclusive');
  t.equal(segmentAt(m.timeline, base + 4 * H), null);
  t.equal(nextBoundary(m.timeline, base + 1), base + 2 * H);
  t.equal(nextBoundary(m.timeline, base + 3 * H), base + 4 * H);
  t.equal(nextBoundary(m.timeline, base + 5 * H), null);
  t.equal(segmentKey(segmentAt(m.timeline, base)), 'assignment:asg|playlist:p1');
  t.equal(segmentKey(null), 'none');
  t.equal(segmentToShow(m.timeline, base - 1), null, 'before the timeline: nothing');
  t.equal(segmentToShow(m.timeline, base + 10 * H)?.source.id, 's1', 'past the whole timeline (offline for days): the last segment carries on');
  t.equal(segmentToShow([], base), null);
});

t.test('day-parts are read in the screen time zone, across DST and midnight', async (t) => {
  // 2026-03-07 is a Saturday. 08:30 UTC is 09:30 in Paris (UTC+1 in winter).
  t.same(localClock(Date.parse('2026-03-07T08:30:00Z'), 'Europe/Paris'), { weekday: 6, minutes: 9 * 60 + 30 });
  // After the EU switch (2026-03-29), 07:30 UTC is 09:30 in Paris.
  t.same(localClock(Date.parse('2026-03-30T07:30:00Z'), 'Europe/Paris'), { weekday: 1, minutes: 9 * 60 + 30 });
  t.same(localClock(Date.parse('2026-03-07T23:30:00Z'), 'America/New_York'), { weekday: 6, minutes: 18 * 60 + 30 });
  const m = readManifest(sampleManifest());
  const items = (m.timeline[0]!.content as any).playlist.items;
  const sat = items[1];
  t.ok(itemPlayableAt(sat, Date.parse('2026-03-07T08:30:00Z'), 'Europe/Paris'), 'Saturday 09:30 Paris');
  t.notOk(itemPlayableAt(sat, Date.parse('2026-03-07T07:30:00Z'), 'Europe/Paris'), 'Saturday 08:30 Paris');
  t.ok(itemPlayableAt(sat, Date.parse('2026-03-07T07:30:00Z'), 'UTC') === false, 'in UTC 07:30 is before 09:00 too');
  t.notOk(itemPlayableAt(sat, Date.parse('2026-03-08T08:30:00Z'), 'Europe/Paris'), 'Sunday');
  const overnight = { ...sat, dayParts: [{ days: [5], start: 22 * 60, end: 2 * 60 }] };
  t.ok(itemPlayableAt(overnight, Date.parse('2026-03-06T22:30:00Z'), 'UTC'), 'Friday 22:30');
  t.ok(itemPlayableAt(overnight, Date.parse('2026-03-07T01:30:00Z'), 'UTC'), 'Saturday 01:30 belongs to Friday night');
  t.notOk(itemPlayableAt(overnight, Date.parse('2026-03-08T01:30:00Z'), 'UTC'), 'Sunday 01:30 does not');
  const windowed = { ...sat, dayParts: [], validFrom: 1000, validUntil: 2000 };
  t.notOk(itemPlayableAt(windowed, 999, 'UTC'));
  t.ok(itemPlayableAt(windowed, 1000, 'UTC'));
  t.notOk(itemPlayableAt(windowed, 2000, 'UTC'));
});

t.test('sequencer plays in order, round and round, skipping what is not valid or not cached', async (t) => {
  const m = readManifest(sampleManifest());
  const items = (m.timeline[0]!.content as any).playlist.items;
  const seq = new PlaylistSequencer(items);
  const sat0930 = Date.parse('2026-03-07T08:30:00Z');
  const all = () => true;
  t.same(
    [1, 2, 3, 4].map(() => seq.next(sat0930, 'Europe/Paris', all)?.id),
    ['i1', 'i2', 'w', 'i1'],
  );
  const sun = Date.parse('2026-03-08T08:30:00Z');
  const seq2 = new PlaylistSequencer(items);
  t.same(
    [1, 2, 3].map(() => seq2.next(sun, 'Europe/Paris', all)?.id),
    ['i1', 'w', 'i1'],
    'day-parted item skipped on Sunday',
  );
  const seq3 = new PlaylistSequencer(items);
  const notCached = (i: any) => i.id !== 'i1';
  t.same(
    [1, 2, 3].map(() => seq3.next(sat0930, 'Europe/Paris', notCached)?.id),
    ['i2', 'w', 'i2'],
    'uncached item skipped',
  );
  t.equal(
    new PlaylistSequencer(items).next(sat0930, 'UTC', () => false),
    null,
  );
  t.equal(new PlaylistSequencer([]).next(sat0930, 'UTC', all), null);
  t.equal(itemDurationMs(items[0]), 4000);
  t.equal(itemDurationMs({ ...items[0], durationMs: null }), 10_000);
  t.equal(itemDurationMs(items[2]), 30_000);
  t.equal(itemDurationMs(items[1]), 19_000, 'video: its duration plus a safety margin (it ends on `ended`)');
});

t.test('cache plan: fetch missing (small first), keep present, evict unlisted', async (t) => {
  const m = readManifest(sampleManifest());
  const origin = 'http://screen.local:8080/play/';
  const k = (p: string) => cacheKey(p, origin);
  t.equal(k('/api/v1/player/assets/a1/variants/v1#x'), 'http://screen.local:8080/api/v1/player/assets/a1/variants/v1');
  const plan = planCache(m.media, [k('/api/v1/player/assets/a1/variants/v1'), k('/api/v1/player/assets/old/variants/gone')], origin);
  t.same(
    plan.keep.map((e) => e.variantId),
    ['v1'],
  );
  t.same(
    plan.fetch.map((e) => e.variantId),
    ['v0', 'v2'],
  );
  t.same(plan.evict, [k('/api/v1/player/assets/old/variants/gone')]);
  t.ok(isMediaPath('/api/v1/player/assets/a/variants/b'));
  t.notOk(isMediaPath('/api/v1/player/manifest'));
  t.notOk(isMediaPath('/api/v1/player/assets/a/variants/b/x'));
  const e = m.media[0]!;
  t.same(verifyDownload(e, 100, 'A'.repeat(64)), { ok: true });
  t.same(verifyDownload(e, 100, null), { ok: true }, 'unhashed large file: size only');
  t.equal(verifyDownload(e, 99, 'a'.repeat(64)).ok, false);
  t.equal(verifyDownload(e, 100, 'c'.repeat(64)).ok, false);
  t.equal(toHex(new Uint8Array([0, 15, 255]).buffer), '000fff');
});

t.test('layout geometry: letterboxed fit and zone rectangles', async (t) => {
  t.same(fitCanvas({ width: 1920, height: 1080 }, { width: 1280, height: 1024 }), { scale: 1280 / 1920, offsetX: 0, offsetY: (1024 - 720) / 2 });
  t.same(fitCanvas({ width: 1080, height: 1920 }, { width: 1920, height: 1080 }), { scale: 0.5625, offsetX: (1920 - 607.5) / 2, offsetY: 0 });
  t.same(fitCanvas({ width: 0, height: 0 }, { width: 10, height: 10 }), { scale: 1, offsetX: 0, offsetY: 0 });
  t.same(zoneRect({ x: 0, y: 0, width: 1, height: 1 }, { width: 1920, height: 1080 }), { x: 0, y: 0, width: 1, height: 1 }, 'pixels, even tiny');
  t.same(zoneRect({ x: 1280, y: 0, width: 640, height: 1080 }, { width: 1920, height: 1080 }), { x: 1280, y: 0, width: 640, height: 1080 }, 'pixels');
  t.same(zoneRect({ x: 1800, y: -10, width: 640, height: 2000 }, { width: 1920, height: 1080 }), { x: 1800, y: 0, width: 120, height: 1080 }, 'clipped');
});

t.test('commands: known ones mapped, others answered as unsupported, expiry, dedup', async (t) => {
  t.same(commandAction({ id: '1', type: 'reload' }), { kind: 'reload' });
  t.same(commandAction({ id: '1', type: 'clear_cache' }), { kind: 'clear-cache' });
  t.same(commandAction({ id: '1', type: 'screenshot' }), { kind: 'screenshot' });
  t.same(commandAction({ id: '1', type: 'identify', params: { seconds: 999 } }), { kind: 'identify', seconds: 120 });
  t.same(commandAction({ id: '1', type: 'restart_player' }), { kind: 'reload' });
  t.same(commandAction({ id: '1', type: 'sync_now' }), { kind: 'sync' });
  t.same(commandAction({ id: '1', type: 'update_config' }), { kind: 'sync' });
  t.equal(commandAction({ id: '1', type: 'display_off' }).kind, 'unsupported');
  t.same(commandAction({ id: '1', type: 'identify' }), { kind: 'identify', seconds: 10 });
  const reboot = commandAction({ id: '1', type: 'reboot' });
  t.equal(reboot.kind, 'unsupported');
  t.match((reboot as any).reason, /no control over the machine/);
  t.ok(commandExpired({ id: '1', type: 'reload', expiresAt: new Date(1000).toISOString() }, 2000));
  t.notOk(commandExpired({ id: '1', type: 'reload', expiresAt: null }, 2000));
  const seen = new SeenCommands(2);
  t.ok(seen.first('a'));
  t.notOk(seen.first('a'));
  t.ok(seen.first('b'));
  t.ok(seen.first('c'));
  t.ok(seen.first('a'), 'forgotten beyond the limit');
});

t.test('storage keeps a well-formed credential and forgets it on demand', async (t) => {
  const map = new Map<string, string>();
  const store = {
    getItem: (k: string) => map.get(k) ?? null,
    setItem: (k: string, v: string) => void map.set(k, v),
    removeItem: (k: string) => void map.delete(k),
  };
  const s = new PlayerStorage(store);
  t.equal(s.identity(), null);
  s.saveIdentity({ screenId: 'sid', credential: 'svc_device_a.b', enrolledAt: 'now' });
  t.same(s.identity(), { screenId: 'sid', credential: 'svc_device_a.b', enrolledAt: 'now' });
  s.saveManifest('"e1"', { revision: 1 });
  t.same(s.lastManifest(), { etag: '"e1"', manifest: { revision: 1 } });
  s.forgetIdentity();
  t.equal(s.identity(), null);
  t.equal(s.lastManifest(), null);
  map.set('placard.player.identity', '{"credential":"svci_x.y","screenId":"s"}');
  t.equal(s.identity(), null, 'an integration token is not a device credential');
  map.set('placard.player.identity', '{broken');
  t.equal(s.identity(), null);
});

t.test('socket messages and connection', async (t) => {
  t.same(parseSocketMessage('{"type":"manifest.changed","revision":5}'), { type: 'manifest.changed', revision: '5' });
  t.same(parseSocketMessage('{"type":"command.pending","commandId":"c1"}'), { type: 'command.pending', commandId: 'c1' });
  t.same(parseSocketMessage('{"type":"ping"}'), { type: 'ping' });
  t.same(parseSocketMessage('{"type":"hello","screenId":"s","manifestRevision":3}'), { type: 'hello', manifestRevision: '3' });
  t.same(parseSocketMessage('{"type":"takeover.started"}'), { type: 'takeover.started' });
  t.same(parseSocketMessage('{"type":"news"}'), { type: 'other', name: 'news' });
  t.equal(closeAction(4001), 'credential-lost');
  t.equal(closeAction(4003), 'disabled');
  t.equal(closeAction(4009), 'replaced');
  t.equal(closeAction(1006), 'reconnect');
  t.equal(closeAction(1001), 'reconnect');
  t.equal(parseSocketMessage('nope'), null);
  t.equal(parseSocketMessage('{"x":1}'), null);
  t.equal(parseSocketMessage(new ArrayBuffer(2)), null);
  t.equal(socketUrl('https://signs.example/play/?kiosk=1'), 'wss://signs.example/api/v1/player/socket');
  t.equal(socketUrl('http://10.0.0.2:8080/play'), 'ws://10.0.0.2:8080/api/v1/player/socket');
  t.same(socketProtocols('svc_device_a.b'), ['placard.v1', 'bearer.svc_device_a.b']);
});

t.test('api errors classify lost credentials and network failures', async (t) => {
  t.ok(new PlayerApiError(401, 'credential_revoked', 'x').credentialLost);
  t.ok(new PlayerApiError(401, 'invalid_credential', 'x').credentialLost);
  t.notOk(new PlayerApiError(403, 'screen_disabled', 'x').credentialLost);
  t.ok(new PlayerApiError(0, 'network', 'x').network);
});

t.test('manifest items in the playlists module shape: dayparts from/to, 24:00, transitions, disabled items', async (t) => {
  const m = readManifest({
    revision: 'r1',
    timeZone: 'Europe/Paris',
    timeline: [
      {
        startsAt: iso(base),
        endsAt: iso(base + H),
        source: { type: 'schedule', id: 's' },
        playlist: {
          id: 'p',
          items: [
            {
              id: 'a',
              type: 'asset',
              assetId: 'x',
              assetKind: 'image',
              effectiveDurationMs: 7000,
              dayparts: [{ days: [6], from: '20:00', to: '24:00' }],
              transition: { type: 'slide', durationMs: 300 },
            },
            { id: 'b', type: 'asset', assetId: 'x', assetKind: 'image', enabled: false },
            { id: 'c', type: 'asset', assetId: 'x', assetKind: 'video', transition: { type: 'none', durationMs: 0 } },
          ],
        },
      },
    ],
    media: [],
  });
  const items = (m.timeline[0]!.content as any).playlist.items;
  t.same(
    items.map((i: any) => i.id),
    ['a', 'c'],
    'disabled item dropped',
  );
  t.same(items[0].dayParts, [{ days: [6], start: 1200, end: 1440 }]);
  t.same(items[0].transition, { type: 'slide', durationMs: 300 });
  t.equal(items[0].durationMs, 7000);
  t.same(items[1].transition, { type: 'none', durationMs: 0 });
  t.equal(items[1].kind, 'video');
  t.ok(itemPlayableAt(items[0], Date.parse('2026-03-07T22:59:00Z'), 'Europe/Paris'), 'Saturday 23:59 local, up to 24:00');
  t.notOk(itemPlayableAt(items[0], Date.parse('2026-03-07T23:00:00Z'), 'Europe/Paris'), 'Sunday 00:00 local');
});

t.test('layouts in the layouts module shape: background object, zone content, zone fit', async (t) => {
  const m = readManifest({
    revision: 'r',
    timeZone: 'UTC',
    timeline: [
      {
        startsAt: iso(base),
        endsAt: iso(base + H),
        source: { type: 'schedule', id: 's' },
        layout: {
          id: 'L',
          name: 'Lobby',
          content: {
            width: 1080,
            height: 1920,
            background: { color: '#112233', assetId: 'bg' },
            zones: [
              {
                id: 'top',
                x: 0,
                y: 0,
                width: 1080,
                height: 1200,
                zIndex: 2,
                fit: 'cover',
                content: { type: 'playlist', playlistId: 'p' },
                playlist: { id: 'p', items: [{ id: 'i', assetId: 'x', assetKind: 'image' }] },
              },
              { id: 'bottom', x: 0, y: 1200, width: 1080, height: 720, content: { type: 'asset', assetId: 'y', durationMs: 4000 } },
            ],
          },
        },
      },
    ],
    media: [{ assetId: 'y', variantId: 'vy', url: '/u/y', contentType: 'video/mp4', sizeBytes: 1, sha256: null }],
  });
  const seg = m.timeline[0]!;
  t.equal(seg.content.type, 'layout');
  const layout = (seg.content as any).layout;
  t.match(layout, { id: 'L', width: 1080, height: 1920, background: '#112233', backgroundAssetId: 'bg' });
  t.equal(layout.zones[0].playlist.items[0].fit, 'cover', "the zone's fit applies to its items");
  t.equal(layout.zones[0].zIndex, 2);
  t.same(
    layout.zones[1].playlist.items.map((i: any) => [i.assetId, i.kind, i.durationMs]),
    [['y', 'video', 4000]],
    'a single-asset zone',
  );
});

t.test('manifest items as the content module builds them: windows, PDF pages, poster, muted, refreshAfter', async (t) => {
  const m = readManifest({
    screenId: 's',
    revision: 4,
    generatedAt: iso(base),
    validUntil: iso(base + 48 * H),
    refreshAfter: iso(base + H),
    timeZone: 'UTC',
    timeline: [
      {
        startsAt: iso(base),
        endsAt: iso(base + 48 * H),
        source: { type: 'assignment', id: 'a' },
        content: { type: 'playlist', id: 'p' },
        playlist: {
          id: 'p',
          name: 'P',
          items: [
            {
              id: 'w',
              playlistId: 'p',
              kind: 'image',
              assetId: 'x',
              variantId: 'vx',
              posterVariantId: null,
              pageVariantIds: [],
              url: null,
              name: 'x',
              durationMs: 5000,
              transition: { type: 'fade', durationMs: 500 },
              validFrom: null,
              validUntil: null,
              dayparts: [],
              windows: [{ startsAt: iso(base + H), endsAt: iso(base + 2 * H) }],
              fit: 'contain',
              muted: true,
            },
            {
              id: 'd',
              playlistId: 'p',
              kind: 'pdf',
              assetId: 'y',
              variantId: null,
              posterVariantId: null,
              pageVariantIds: ['p1', 'p2'],
              url: null,
              name: 'doc',
              durationMs: 20000,
              transition: { type: 'none', durationMs: 0 },
              validFrom: null,
              validUntil: null,
              dayparts: [],
              windows: null,
              fit: 'contain',
              muted: true,
            },
            {
              id: 'v',
              playlistId: 'p',
              kind: 'video',
              assetId: 'z',
              variantId: 'vz',
              posterVariantId: 'pz',
              pageVariantIds: [],
              url: null,
              name: 'clip',
              durationMs: 4000,
              transition: { type: 'fade', durationMs: 500 },
              validFrom: null,
              validUntil: null,
              dayparts: [],
              windows: [],
              fit: 'cover',
              muted: false,
            },
          ],
        },
      },
    ],
    media: [],
    overlays: [],
    warnings: [],
  });
  t.equal(m.refreshAfter, base + H);
  const [w, d, v] = (m.timeline[0]!.content as any).playlist.items;
  t.same(w.windows, [{ start: base + H, end: base + 2 * H }]);
  t.notOk(itemPlayableAt(w, base + 30 * 60_000, 'UTC'), 'before its window');
  t.ok(itemPlayableAt(w, base + 90 * 60_000, 'UTC'), 'inside its window');
  t.notOk(itemPlayableAt(w, base + 2 * H, 'UTC'), 'window end is exclusive');
  t.notOk(itemPlayableAt(w, base + 3 * H, 'UTC'), 'after its window, within the horizon');
  t.equal(w.windowsUntil, base + 48 * H);
  t.ok(itemPlayableAt(w, base + 49 * H, 'UTC'), 'past the manifest horizon (offline): its own rules (none) say yes');
  t.same(d.pageVariantIds, ['p1', 'p2']);
  t.equal(d.kind, 'pdf');
  t.ok(itemPlayableAt(d, base, 'UTC'), 'windows null: always');
  t.equal(itemDurationMs(d), 20000);
  t.equal(v.posterVariantId, 'pz');
  t.equal(v.muted, false);
  t.equal(v.fit, 'cover');
  t.notOk(itemPlayableAt(v, base, 'UTC'), 'empty windows: never within the horizon');
});

t.test('noise meter: ten-second grid buckets, split samples, hysteresis triggers, queue until accepted', async (t) => {
  const { NoiseMeter, levelFromRms, MAX_BUCKETS_PER_HEARTBEAT, BUCKET_MS } = await import('../console/src/player/noise.js');
  t.equal(levelFromRms(1), 100);
  t.equal(levelFromRms(0.001), 40);
  t.equal(levelFromRms(0), 0);
  t.equal(levelFromRms(5), 100, 'clamped');
  const g = Date.parse('2026-03-07T10:00:00.000Z');
  const m = new NoiseMeter(60, 75);
  // 0-5 s at 50, 5-10 s at 80 (loud: one trigger), a sample spanning 9.5-10.5 s at 80.
  m.sample(50, g + 5000, 5000);
  m.sample(80, g + 9500, 4500);
  m.sample(80, g + 10_500, 1000);
  t.equal(m.status(), 'loud');
  m.sample(70, g + 12_000, 1500);
  t.equal(m.status(), 'loud', 'still loud above the warning level (hysteresis)');
  m.sample(40, g + 15_000, 3000);
  t.equal(m.status(), 'normal');
  m.sample(90, g + 19_000, 4000);
  m.tick(g + 20_000);
  const batch = m.batch();
  t.equal(batch.length, 2);
  t.same(batch[0], {
    startedAt: '2026-03-07T10:00:00.000Z',
    averageLevel: 65,
    peakLevel: 80,
    monitoredMs: 10_000,
    warningMs: 0,
    loudMs: 5000,
    triggerCount: 1,
  });
  t.match(batch[1], { startedAt: '2026-03-07T10:00:10.000Z', monitoredMs: 9000, loudMs: 4500, warningMs: 1500, peakLevel: 90, triggerCount: 1 });
  for (const b of batch) t.equal(Date.parse(b.startedAt) % BUCKET_MS, 0, 'on the grid');
  m.acknowledge(batch, 1);
  t.equal(m.pending, 2, 'kept until the whole batch is accepted');
  m.acknowledge(batch, 2);
  t.equal(m.pending, 0);
  // Partly monitored slot: monitoredMs says so (not ten seconds of quiet).
  m.sample(30, g + 33_000, 2000);
  m.tick(g + 40_000);
  t.match(m.batch()[0], { startedAt: '2026-03-07T10:00:30.000Z', monitoredMs: 2000, averageLevel: 30 });
  m.discard(m.batch());
  t.equal(m.pending, 0);
  // A long outage: at most 120 per heartbeat, oldest first.
  for (let i = 0; i < 150; i++) m.sample(20, g + 100_000 + i * BUCKET_MS + 5000, 5000);
  m.tick(g + 100_000 + 151 * BUCKET_MS);
  t.equal(m.pending, 150);
  const first = m.batch();
  t.equal(first.length, MAX_BUCKETS_PER_HEARTBEAT);
  m.acknowledge(first, first.length);
  t.equal(m.batch().length, 30);
});
