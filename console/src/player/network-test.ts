/**
 * The identification pattern of `network.test` (docs/presentation-networks.md): the screen's
 * name, its position, the network's name and a clock with milliseconds on the estimated
 * server time, over everything until `until`. Split from sync.ts, which stays free of the DOM.
 */
import { clockText, type NetworkTest } from './sync.js';

let overlay: { el: HTMLElement; frame: number } | null = null;

/** Shows the pattern until `test.until` (server clock); a new test replaces the running one. */
export function showNetworkTest(test: NetworkTest, now: () => number): void {
  if (overlay) {
    cancelAnimationFrame(overlay.frame);
    overlay.el.remove();
  }
  const el = document.createElement('div');
  el.className = 'pl-network-test';
  el.setAttribute(
    'style',
    'position:fixed;inset:0;z-index:2147483000;display:flex;flex-direction:column;align-items:center;justify-content:center;gap:2vh;background:repeating-linear-gradient(45deg,#111 0 40px,#222 40px 80px);color:#fff;font:600 5vh system-ui,sans-serif;text-align:center',
  );
  const line = (cls: string, text: string, size: string) => {
    const d = document.createElement('div');
    d.className = cls;
    d.textContent = text;
    d.style.fontSize = size;
    el.append(d);
    return d;
  };
  line('pl-nt-screen', test.screenName, '10vh');
  line('pl-nt-position', `Position ${test.position + 1} of ${test.memberCount}${test.leader ? ' · leader' : ''}`, '6vh');
  line('pl-nt-network', test.networkName, '5vh');
  const clock = line('pl-nt-clock', '', '12vh');
  clock.style.fontVariantNumeric = 'tabular-nums';
  document.body.append(el);
  const state = { el, frame: 0 };
  overlay = state;
  const tick = () => {
    const t = now();
    if (t >= test.until) {
      el.remove();
      if (overlay === state) overlay = null;
      return;
    }
    clock.textContent = clockText(t);
    state.frame = requestAnimationFrame(tick);
  };
  tick();
}
