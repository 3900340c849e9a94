/**
 * The player's overlay logic (console/src/player/overlay-config.ts), imported directly: the
 * manifest's overlays read defensively, the countdown's next occurrence in the screen's zone
 * across DST changes in two zones, the after-zero modes, calibration.
 */
import t from 'tap';
import { NoiseMeter } from '../console/src/player/noise.js';
import {
  calibrated,
  type CountdownConfig,
  countdownState,
  countdownTarget,
  formatDuration,
  readOverlays,
  zonedInstant,
} from '../console/src/player/overlay-config.js';
import { readManifest } from '../console/src/player/manifest.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function daily(time: string, extra: Partial<CountdownConfig> = {}, weekdays: number[] | null = null): CountdownConfig {
  return {
    target: { type: 'daily', time, weekdays },
    label: 'Break',
    windowMin: 60,
    position: 'bottom',
    heightPct: 6,
    colors: { bar: '#e4572e', background: '#00000099', text: '#ffffff' },
    afterZero: { show: 'hide', text: 'Time!', forMin: 5 },
    ...extra,
  };
}

t.test('daily countdown: the next occurrence across the spring DST change in two zones', async (t) => {
  // Europe/Berlin goes from +01:00 to +02:00 on 2026-03-29; America/New_York from -05:00 to -04:00 on 2026-03-08.
  t.equal(iso(countdownTarget(daily('08:00'), Date.parse('2026-03-28T20:00:00Z'), 'Europe/Berlin')), '2026-03-29T06:00:00.000Z');
  t.equal(iso(countdownTarget(daily('08:00'), Date.parse('2026-03-28T06:30:00Z'), 'Europe/Berlin')), '2026-03-28T07:00:00.000Z', 'same day, before the change');
  t.equal(iso(countdownTarget(daily('08:00'), Date.parse('2026-03-07T23:00:00Z'), 'America/New_York')), '2026-03-08T12:00:00.000Z');
  t.equal(iso(countdownTarget(daily('08:00'), Date.parse('2026-03-07T12:30:00Z'), 'America/New_York')), '2026-03-07T13:00:00.000Z');
  // The autumn change: New York back to -05:00 on 2026-11-01, Berlin to +01:00 on 2026-10-25.
  t.equal(iso(countdownTarget(daily('08:00'), Date.parse('2026-10-31T23:00:00Z'), 'America/New_York')), '2026-11-01T13:00:00.000Z');
  t.equal(iso(countdownTarget(daily('08:00'), Date.parse('2026-10-24T20:00:00Z'), 'Europe/Berlin')), '2026-10-25T07:00:00.000Z');
  // A time inside the skipped hour lands just after the gap; an ambiguous one is its first occurrence.
  t.equal(iso(zonedInstant(2026, 3, 29, 2, 30, 'Europe/Berlin')), '2026-03-29T01:30:00.000Z', '02:30 does not exist: 03:30 CEST');
  t.equal(iso(zonedInstant(2026, 10, 25, 2, 30, 'Europe/Berlin')), '2026-10-25T00:30:00.000Z', '02:30 twice: the first (CEST)');
  t.equal(iso(zonedInstant(2026, 3, 8, 2, 30, 'America/New_York')), '2026-03-08T07:30:00.000Z', '02:30 does not exist: 03:30 EDT');
  // Weekdays (ISO, 1 = Monday): Saturday 2026-03-28 -> Monday 2026-03-30 (already CEST).
  t.equal(iso(countdownTarget(daily('09:00', {}, [1]), Date.parse('2026-03-28T10:00:00Z'), 'Europe/Berlin')), '2026-03-30T07:00:00.000Z');
  t.equal(iso(countdownTarget(daily('09:00', {}, [6, 7]), Date.parse('2026-03-28T10:00:00Z'), 'Europe/Berlin')), '2026-03-29T07:00:00.000Z');
  t.equal(iso(countdownTarget(daily('09:00', {}, [6]), Date.parse('2026-03-28T07:59:00Z'), 'Europe/Berlin')), '2026-03-28T08:00:00.000Z');
});

t.test('countdown state: the window, the text, the after-zero modes', async (t) => {
  const target = Date.parse('2026-05-04T12:00:00Z');
  const at = (extra: Partial<CountdownConfig> = {}): CountdownConfig => ({ ...daily('00:00', extra), target: { type: 'at', at: target } });
  t.same(countdownState(at(), target - 90 * 60_000, 'UTC'), { visible: false, fraction: 0, text: '', phase: 'hidden' }, 'before its window');
  const half = countdownState(at(), target - 30 * 60_000, 'UTC');
  t.same(half, { visible: true, fraction: 0.5, text: 'Break 30:00', phase: 'before' });
  t.equal(countdownState(at({ windowMin: 120 }), target - 90 * 60_000 - 1500, 'UTC').text, 'Break 1:30:02', 'h:mm:ss above an hour');
  t.equal(countdownState(at({ label: '' }), target - 9_000, 'UTC').text, '0:09');
  t.notOk(countdownState(at(), target + 1000, 'UTC').visible, "afterZero 'hide'");
  const msg = at({ afterZero: { show: 'message', text: 'Time!', forMin: 5 } });
  t.same(countdownState(msg, target + 60_000, 'UTC'), { visible: true, fraction: 0, text: 'Time!', phase: 'after' });
  t.notOk(countdownState(msg, target + 5 * 60_000, 'UTC').visible, 'after forMin');
  const up = at({ afterZero: { show: 'count-up', text: '', forMin: 5 } });
  t.equal(countdownState(up, target + 65_000, 'UTC').text, 'Break +1:05');
  t.notOk(countdownState(at({ afterZero: { show: 'count-up', text: '', forMin: 0 } }), target + 1000, 'UTC').visible, 'forMin 0');
  // A daily target stays the current one during its after-zero time, then the next day's is counted to.
  const d = daily('12:00', { afterZero: { show: 'count-up', text: '', forMin: 5 } });
  t.equal(countdownState(d, target + 120_000, 'UTC').text, 'Break +2:00');
  t.equal(iso(countdownTarget(d, target + 6 * 60_000, 'UTC')), '2026-05-05T12:00:00.000Z');
  t.equal(formatDuration(0), '0:00');
  t.equal(formatDuration(3_600_000), '1:00:00');
});

t.test('overlays read defensively: defaults filled, bad or unknown entries skipped with a problem', async (t) => {
  const logo = {
    assetId: '11111111-1111-4111-8111-111111111111',
    variantId: '22222222-2222-4222-8222-222222222222',
    url: '/api/v1/player/media/x',
    contentType: 'image/png',
    sizeBytes: 10,
    sha256: 'ab',
    width: 100,
    height: 50,
  };
  const good = [
    { instanceId: 'a', pluginId: 'brand-bug', name: 'Logo', revision: 1, config: { assetId: logo.assetId }, logo },
    { instanceId: 'b', pluginId: 'countdown-bar', name: 'Bell', revision: 2, config: { target: { type: 'at', at: '2026-05-04T14:00:00+02:00' } } },
    { instanceId: 'c', pluginId: 'noise-meter', name: 'Noise', revision: 1, config: {} },
  ];
  const bad = [
    null,
    'x',
    { instanceId: 'd', pluginId: 'weather', config: {} },
    { pluginId: 'noise-meter', config: {} },
    { instanceId: 'e', pluginId: 'noise-meter', config: { warningLevel: 80, loudLevel: 70 } },
    { instanceId: 'f', pluginId: 'noise-meter', config: { display: 'pie' } },
    { instanceId: 'g', pluginId: 'countdown-bar', config: { target: { type: 'daily', time: '25:00' } } },
    { instanceId: 'h', pluginId: 'countdown-bar', config: { target: { type: 'at', at: 'tomorrow' } } },
    { instanceId: 'i', pluginId: 'countdown-bar', config: { target: { type: 'daily', time: '08:00', weekdays: [0] } } },
    { instanceId: 'j', pluginId: 'countdown-bar', config: { target: { type: 'at', at: '2026-05-04T14:00:00Z' }, colors: { bar: 'red' } } },
    { instanceId: 'k', pluginId: 'brand-bug', config: { assetId: logo.assetId } },
    { instanceId: 'l', pluginId: 'brand-bug', config: { assetId: logo.assetId, opacity: 2 }, logo },
    { instanceId: 'm', pluginId: 'countdown-bar', config: null },
  ];
  const problems: string[] = [];
  const media = [{ ...logo, url: '/cached' }];
  const read = readOverlays([...bad.slice(0, 3), ...good, ...bad.slice(3)], media, problems);
  t.same(
    read.map((o) => o.instanceId),
    ['a', 'b', 'c'],
  );
  t.equal(problems.length, bad.length, problems.join('\n'));
  const [bug, bar, meter] = read as [any, any, any];
  t.equal(bug.logo.url, '/cached', 'the logo is the media entry the cache holds');
  t.same(bug.config, { assetId: logo.assetId, corner: 'top-right', sizePct: 12, marginPct: 2, opacity: 0.85, hideDuringFullScreenVideo: false });
  t.equal(bar.config.target.at, Date.parse('2026-05-04T12:00:00Z'));
  t.same(bar.config.afterZero, { show: 'hide', text: 'Time!', forMin: 5 });
  t.equal(bar.config.colors.background, '#00000099');
  t.same(meter.config.microphone, { deviceLabel: '', echoCancellation: false, noiseSuppression: false, autoGainControl: false });
  t.equal(meter.config.display, 'bar');
  t.same(readOverlays('nope', [], []), []);
  // A changed revision or config is another key (redrawn); the same entry keeps its key.
  t.equal(readOverlays([good[1]], [], [])[0]!.key, bar.key);
  t.not(readOverlays([{ ...good[1], revision: 3 }], [], [])[0]!.key, bar.key);

  // Through readManifest: a bad overlay is a problem line, the content still reads.
  const m = readManifest({
    screenId: 's',
    revision: 'r1',
    timeZone: 'Europe/Berlin',
    generatedAt: '2026-05-04T10:00:00Z',
    timeline: [],
    media: [],
    overlays: [good[2], bad[4]],
  });
  t.same(
    m.overlays.map((o) => o.instanceId),
    ['c'],
  );
  t.ok(m.problems.some((p) => p.includes('loudLevel')));
});

t.test('noise: calibration clamps; a meter with new thresholds keeps the queued buckets', async (t) => {
  t.equal(calibrated(50, 10), 60);
  t.equal(calibrated(95, 10), 100);
  t.equal(calibrated(5, -10), 0);
  const g = Date.parse('2026-03-07T10:00:00.000Z');
  const a = new NoiseMeter(60, 75);
  a.sample(70, g + 5_000, 5_000);
  a.sample(80, g + 12_000, 2_000);
  t.equal(a.pending, 1);
  const b = new NoiseMeter(50, 90);
  b.adopt(a);
  t.equal(b.pending, 2, 'the open bucket is closed and carried over');
  t.equal(b.current, 80);
});
