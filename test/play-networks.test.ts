/**
 * Presentation networks in the browser player (docs/presentation-networks.md), in Debian's
 * Chromium against the real server: two /play pages of one network show the same item at
 * sampled moments (the middle of each item on the first page), and `test` puts the
 * identification pattern (screen name, position, network, a running clock) on both.
 */
import t from 'tap';
import { launchBrowser, waitUntil } from './helpers/browser.js';
import { startApp } from './helpers/harness.js';
import { itemAt, shownLog, syncedPair } from './helpers/networks.js';

t.test('two /play pages of one network show the same item; test shows the pattern', async (t) => {
  const app = await startApp(t);
  const browser = await launchBrowser(t);
  if (!browser) return;
  const ITEM_MS = 1_500;
  const { owner, pages, networkId, itemIds } = await syncedPair(t, app, browser, { itemMs: ITEM_MS });
  const [left, right] = pages;
  const start = (await shownLog(left)).length;
  // Five more transitions on the left page.
  await waitUntil('five more items on the left page', async () => (await shownLog(left)).length >= start + 5, 30_000);
  const a = await shownLog(left);
  const b = await shownLog(right);
  const moments = a.slice(start, start + 4).map((s, i) => (s.at + a[start + i + 1]!.at) / 2);
  t.equal(moments.length, 4);
  for (const at of moments) {
    const onLeft = itemAt(a, at);
    t.ok(onLeft && itemIds.includes(onLeft), 'an item of the playlist is on');
    t.equal(itemAt(b, at), onLeft, 'the right page shows the same item at the same moment');
  }
  // Consecutive items on the left follow the playlist's order.
  const order = a.slice(start, start + 5).map((s) => itemIds.indexOf(s.itemId));
  for (let i = 1; i < order.length; i++) t.equal(order[i], (order[i - 1]! + 1) % itemIds.length, 'in playlist order');

  const res = await app.json(`/api/v1/presentation-networks/${networkId}/test`, { method: 'POST', headers: owner.headers, json: { seconds: 30 } });
  t.equal(res.status, 200);
  t.equal(res.body.data.socketsReached, 2);
  for (const [i, page] of pages.entries()) {
    const pattern = page.locator('.pl-network-test');
    await pattern.waitFor({ state: 'visible', timeout: 10_000 });
    t.equal(await pattern.locator('.pl-nt-screen').innerText(), i === 0 ? 'Left' : 'Right');
    t.match(await pattern.locator('.pl-nt-position').innerText(), new RegExp(`Position ${i + 1} of 2`));
    t.equal(await pattern.locator('.pl-nt-network').innerText(), 'Row');
    const first = await pattern.locator('.pl-nt-clock').innerText();
    t.match(first, /^\d\d:\d\d:\d\d\.\d{3}$/);
    await waitUntil('the clock runs', async () => (await pattern.locator('.pl-nt-clock').innerText()) !== first, 5_000);
  }
});
