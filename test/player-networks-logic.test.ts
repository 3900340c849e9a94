/**
 * The browser player's presentation-network logic (console/src/player/sync.ts), imported
 * directly: the server-clock estimate follows the sample with the smallest round trip, the
 * synced item comes from (serverNow - epoch) mod cycle, the manifest's network is read, and
 * the test message is parsed.
 */
import t from 'tap';
import { readManifest } from '../console/src/player/manifest.js';
import { ClockSync, clockText, readNetwork, readNetworkTest, syncedItemAt } from '../console/src/player/sync.js';

const item = (id: string, durationMs: number, over: Record<string, unknown> = {}) =>
  ({
    id,
    kind: 'image',
    durationMs,
    windows: null,
    windowsUntil: null,
    validFrom: null,
    validUntil: null,
    dayParts: [],
    ...over,
  }) as any;

t.test('the clock estimate takes the sample with the smallest round trip', async (t) => {
  const c = new ClockSync();
  t.equal(c.offsetMs, 0, 'no sample: the local clock');
  t.equal(c.roundTripMs, null);
  // Server 1000 ms ahead; a slow exchange (200 ms, answered late in it) then a fast one.
  c.add(10_000, 11_190, 10_200);
  t.equal(c.offsetMs, 11_190 + 100 - 10_200);
  c.add(20_000, 21_005, 20_010);
  t.equal(c.offsetMs, 21_005 + 5 - 20_010, 'the 10 ms round trip wins');
  t.equal(c.roundTripMs, 10);
  c.add(30_000, 31_300, 30_400);
  t.equal(c.roundTripMs, 10, 'a slower later sample does not replace it');
  c.add(30_000, Number.NaN, 30_001);
  c.add(30_000, 31_000, 29_999);
  t.equal(c.roundTripMs, 10, 'nonsense samples are ignored');
  // Samples older than 10 minutes no longer count.
  c.add(700_000, 701_050, 700_100);
  t.equal(c.roundTripMs, 100);
});

t.test('the synced item: (now - epoch) mod cycle over the playable items', async (t) => {
  const items = [item('a', 1000), item('b', 2000), item('c', 1000)];
  const epoch = Date.UTC(2026, 0, 1);
  const at = (ms: number) => syncedItemAt(items, epoch, epoch + ms, 'UTC');
  t.match(at(0), { item: { id: 'a' }, startsAt: epoch, endsAt: epoch + 1000 });
  t.match(at(999), { item: { id: 'a' } });
  t.match(at(1000), { item: { id: 'b' }, startsAt: epoch + 1000, endsAt: epoch + 3000 });
  t.match(at(3500), { item: { id: 'c' } });
  t.match(at(4000 * 25 + 1500), { item: { id: 'b' }, startsAt: epoch + 100_000 + 1000 });
  t.match(at(-500), { item: { id: 'c' }, startsAt: epoch - 1000 }, 'before the epoch too');
  // An item out of its validity leaves the cycle.
  const later = [item('a', 1000), item('b', 1000, { validUntil: epoch }), item('c', 1000)];
  t.match(syncedItemAt(later, epoch, epoch + 1500, 'UTC'), { item: { id: 'c' } });
  t.equal(syncedItemAt([], epoch, epoch, 'UTC'), null);
});

t.test('the manifest’s network and the test message', async (t) => {
  const m = readManifest({
    revision: 3,
    timeZone: 'UTC',
    timeline: [],
    presentationNetwork: { id: 'n1', name: 'Row', epoch: '2026-01-01T00:00:00.000Z', leaderScreenId: 's1', position: 1, memberCount: 2 },
  });
  t.same(m.network, { id: 'n1', name: 'Row', epoch: Date.UTC(2026, 0, 1), leaderScreenId: 's1', position: 1, memberCount: 2 });
  t.equal(readManifest({ timeline: [] }).network, null);
  t.equal(readNetwork({ id: 'n1', epoch: 'soon' }), null, 'no usable epoch: not synced');
  const test = readNetworkTest(
    JSON.stringify({
      type: 'network.test',
      networkId: 'n1',
      networkName: 'Row',
      screenName: 'Left',
      position: 0,
      leader: true,
      memberCount: 2,
      until: '2026-01-01T00:00:30.000Z',
    }),
  );
  t.match(test, { networkName: 'Row', screenName: 'Left', position: 0, leader: true, until: Date.UTC(2026, 0, 1, 0, 0, 30) });
  t.equal(readNetworkTest(JSON.stringify({ type: 'network.test' })), null);
  t.equal(readNetworkTest('{"type":"manifest.changed"}'), null);
  t.equal(clockText(Date.UTC(2026, 0, 1, 9, 5, 7, 42)), '09:05:07.042');
});
