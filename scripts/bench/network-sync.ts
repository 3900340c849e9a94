/**
 * Presentation network sync benchmark (issue 21): how far apart two /play pages of one
 * network show the same item.
 *
 * The real app (test harness: real HTTP on loopback, real SQLite) and Debian's Chromium
 * (playwright-core, /usr/bin/chromium, --headless --no-sandbox --disable-gpu
 * --disable-background-networking). Two browser contexts (two screens) are paired, put in one
 * network, and the leader plays a playlist of flat colour images of --item-ms each. Each
 * page records the requestAnimationFrame timestamp (performance.timeOrigin + ts) of the
 * frame after each item's layer became visible; for every transition of the first page in
 * the measured --seconds, the skew is the distance to the same item's appearance on the
 * second page. Prints median, p95 and max (ms) and the clock estimate each page holds.
 *
 *   npm run bench:network-sync [-- --seconds 30 --item-ms 1000 --skew-ms 0 --baseline]
 * `--skew-ms N` sets the second page's Date.now() N ms ahead (a player whose clock is off: the
 * server-clock estimate must absorb it). `--baseline` plays the same playlist on both screens
 * without a network (the second assigned 400 ms later, each on its own timer), to show what
 * unsynchronised figures look like.
 * Exits 1 when the p95 is over 50 ms (issue 21's target on a LAN). Both pages share this
 * machine's clock and loopback, so this measures the player's scheduling and rendering, not
 * LAN clock error (a LAN adds the offset estimate's error: at most half the best round trip).
 */
import type { Test } from 'tap';
import { launchBrowser } from '../../test/helpers/browser.js';
import { startApp } from '../../test/helpers/harness.js';
import { shownLog, skews, syncedPair } from '../../test/helpers/networks.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};

/** A stand-in for tap's Test: the harness only registers teardowns. */
function scope() {
  const teardowns: (() => unknown)[] = [];
  const t = {
    teardown: (fn: () => unknown) => teardowns.push(fn),
    fail: (msg: string) => {
      throw new Error(msg);
    },
    pass: () => {},
  } as unknown as Test;
  return {
    t,
    close: async () => {
      for (const fn of teardowns.reverse()) await fn();
    },
  };
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

async function main() {
  const seconds = arg('seconds', 30);
  const itemMs = arg('item-ms', 1000);
  const baseline = process.argv.includes('--baseline');
  const clockSkewMs = arg('skew-ms', 0);
  const { t, close } = scope();
  try {
    const app = await startApp(t);
    const browser = await launchBrowser(t);
    if (!browser) throw new Error('no Chromium');
    const { pages } = await syncedPair(t, app, browser, { itemMs, colours: 4, network: !baseline, clockSkewMs });
    const from = Date.now() + 500;
    await new Promise((r) => setTimeout(r, seconds * 1000 + 500));
    const [a, b] = await Promise.all(pages.map(shownLog));
    const until = Date.now() - itemMs;
    const measured = a!.filter((s) => s.at <= until);
    const list = skews(measured, b!, from).sort((x, y) => x - y);
    const setList = skews(measured, b!, from, 'set').sort((x, y) => x - y);
    if (list.length === 0) throw new Error('no transitions measured');
    const clocks = await Promise.all(pages.map((p) => p.evaluate(() => (globalThis as any).placardPlayer?.clock?.() ?? null).catch(() => null)));
    const median = pct(list, 50);
    const p95 = pct(list, 95);
    const max = list.at(-1)!;
    console.log(
      `network-sync${baseline ? ' (baseline: no network, each page plays the playlist on its own)' : ''}: ${list.length} transitions over ${seconds} s, items of ${itemMs} ms, two /play pages in one Chromium${clockSkewMs ? `, the second page's clock ${clockSkewMs} ms ahead` : ''}`,
    );
    console.log(`  skew per transition, first frame shown (ms): median ${median.toFixed(1)}  p95 ${p95.toFixed(1)}  max ${max.toFixed(1)}`);
    console.log(
      `  skew per transition, layer made visible (ms): median ${pct(setList, 50).toFixed(1)}  p95 ${pct(setList, 95).toFixed(1)}  max ${setList.at(-1)!.toFixed(1)}`,
    );
    if (clocks.some((c) => c)) console.log(`  clock estimates: ${JSON.stringify(clocks)}`);
    if (p95 > 50 && !baseline) {
      console.log('  p95 over 50 ms: target missed');
      process.exitCode = 1;
    }
  } finally {
    await close();
  }
}

await main();
