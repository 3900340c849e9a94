/**
 * A presentation network of two /play pages in one Chromium (test/play-networks.test.ts and
 * scripts/bench/network-sync.ts): two browser contexts (separate storage, so two screens),
 * paired through the real API, in one network; the leader plays a playlist of flat colour
 * images. Each page records when each item became visible: the requestAnimationFrame
 * timestamp after its layer got `pl-visible`, on performance.timeOrigin's clock (the same
 * system clock for both pages).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { Test } from 'tap';
import { signIn, type SignedIn } from './auth.js';
import { pairPlayPage, waitUntil } from './browser.js';
import type { TestApp } from './harness.js';
import { settledAsset, uploadAsset } from './media.js';
import { samplePng } from './sample-media.js';

export interface Shown {
  /** ms since 1970 (performance.timeOrigin + the timestamp of the frame after the layer became visible). */
  at: number;
  /** ms since 1970 when the player made the layer visible (the class change itself). */
  set: number;
  itemId: string;
}

const COLOURS = [
  { r: 220, g: 30, b: 40 },
  { r: 30, g: 180, b: 60 },
  { r: 30, g: 60, b: 220 },
  { r: 230, g: 200, b: 30 },
];

/** Records every item a page shows (installed before the page loads). */
const RECORDER = `(() => {
  const log = [];
  window.__shown = log;
  new MutationObserver((list) => {
    for (const m of list) {
      const el = m.target;
      if (!(el instanceof HTMLElement) || !el.classList.contains('pl-layer') || !el.classList.contains('pl-visible')) continue;
      if ((m.oldValue || '').includes('pl-visible')) continue;
      const itemId = el.dataset.itemId || '';
      const set = performance.timeOrigin + performance.now();
      requestAnimationFrame((ts) => log.push({ at: performance.timeOrigin + ts, set, itemId }));
    }
  }).observe(document, { subtree: true, attributes: true, attributeFilter: ['class'], attributeOldValue: true });
})();`;

export async function shownLog(page: Page): Promise<Shown[]> {
  return page.evaluate(() => (globalThis as unknown as { __shown: Shown[] }).__shown.slice());
}

export interface SyncedPair {
  owner: SignedIn;
  pages: [Page, Page];
  screenIds: [string, string];
  networkId: string;
  itemIds: string[];
}

/** Two paired /play pages in one network, the leader's playlist of `colours` images of `itemMs` each, playing. */
/**
 * `network: false` (benchmark baseline): both screens are assigned the playlist, the second
 * 400 ms after the first, and each plays it on its own. `clockSkewMs`: the second page's
 * Date.now() runs that far ahead of the machine's clock (a player whose clock is off).
 */
export async function syncedPair(
  t: Test,
  app: TestApp,
  browser: Browser,
  options: { itemMs: number; colours?: number; network?: boolean; clockSkewMs?: number },
): Promise<SyncedPair> {
  const owner = await signIn(app);
  const call = async (method: string, p: string, json?: unknown) => {
    const res = await app.json(p, { method, headers: owner.headers, ...(json !== undefined ? { json } : {}) });
    if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data;
  };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'placard-net-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const assets: string[] = [];
  for (const [i, rgb] of COLOURS.slice(0, options.colours ?? 4).entries()) {
    const file = await samplePng(dir, `c${i}.png`, rgb, 320, 180);
    const made = await uploadAsset(app, owner, readFileSync(file), `c${i}.png`);
    await settledAsset(app, owner, made.id);
    assets.push(made.id);
  }
  const pages: Page[] = [];
  const screenIds: string[] = [];
  for (const name of ['Left', 'Right']) {
    const ctx = await browser.newContext({ viewport: { width: 480, height: 270 } });
    t.teardown(() => ctx.close());
    await ctx.addInitScript(RECORDER);
    if (name === 'Right' && options.clockSkewMs)
      await ctx.addInitScript(`(() => { const real = Date.now.bind(Date); Date.now = () => real() + ${Number(options.clockSkewMs)}; })();`);
    const page = await ctx.newPage();
    await page.goto(`${app.url}/play`);
    screenIds.push(await pairPlayPage(app, owner, page, name));
    pages.push(page);
  }
  const net = options.network === false ? { id: '' } : await call('POST', '/api/v1/presentation-networks', { name: 'Row', screenIds });
  const playlist = await call('POST', '/api/v1/playlists', {
    name: 'Colours',
    items: assets.map((assetId) => ({ assetId, durationMs: options.itemMs, transition: { type: 'none', durationMs: 0 } })),
  });
  await call('PUT', `/api/v1/screens/${screenIds[0]}/playlist-assignment`, { playlistId: playlist.id });
  if (options.network === false) {
    await new Promise((r) => setTimeout(r, 400));
    await call('PUT', `/api/v1/screens/${screenIds[1]}/playlist-assignment`, { playlistId: playlist.id });
  }
  const itemIds: string[] = playlist.items.map((i: { id: string }) => i.id);
  // Both pages play the leader's items (every image cached) before anything is measured.
  for (const page of pages)
    await waitUntil(
      'the page plays every item of the network',
      async () => new Set((await shownLog(page)).map((s) => s.itemId)).size === itemIds.length,
      60_000,
    );
  return { owner, pages: pages as [Page, Page], screenIds: screenIds as [string, string], networkId: net.id, itemIds };
}

/** The item a log says was on at `at` (the last shown at or before it), or null. */
export function itemAt(log: readonly Shown[], at: number): string | null {
  let id: string | null = null;
  for (const s of log) if (s.at <= at) id = s.itemId;
  return id;
}

/**
 * The skew of each transition of `a` (after `from`): the distance to the same item's
 * appearance on `b` nearest to it (ms).
 */
export function skews(a: readonly Shown[], b: readonly Shown[], from: number, key: 'at' | 'set' = 'at'): number[] {
  const out: number[] = [];
  for (const s of a) {
    if (s[key] < from) continue;
    const same = b.filter((x) => x.itemId === s.itemId);
    if (same.length === 0) continue;
    out.push(Math.min(...same.map((x) => Math.abs(x[key] - s[key]))));
  }
  return out;
}
