import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Test } from 'tap';
import type { Page } from 'playwright-core';

const require = createRequire(import.meta.url);
/** axe-core's browser bundle, injected into the page under test (the console's CSP does not apply to DevTools evaluation). */
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface A11yViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/**
 * Runs axe-core (WCAG 2.0/2.1 A and AA rules, and axe's best practices) on the page as it is
 * now and fails `t` on every serious or critical violation, naming the rule and the
 * elements. Moderate and minor ones are reported as comments. Answers the violations.
 */
export async function checkA11y(page: Page, t: Test, label: string, options: { include?: string; disable?: string[] } = {}): Promise<A11yViolation[]> {
  await page.waitForLoadState('domcontentloaded');
  // Colours measured mid-transition (a button just pressed) are neither state: Pico honours reduced motion.
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.evaluate(() => new Promise((r) => (globalThis as any).requestAnimationFrame(() => (globalThis as any).requestAnimationFrame(r))));
  // Reduced motion only stops transitions that start after it: one begun by the last click (a
  // button's colours, 0.2 s) runs on, and on a loaded machine axe could measure it half-way.
  // Finish those first (endless animations, such as a busy spinner, are left alone).
  await page.evaluate(async () => {
    const doc = (globalThis as any).document;
    const finite = doc.getAnimations().filter((a: any) => Number.isFinite(a.effect?.getComputedTiming?.().endTime));
    for (const a of finite) a.finish();
  });
  if (!(await page.evaluate(() => Boolean((globalThis as { axe?: unknown }).axe)))) await page.evaluate(AXE_SOURCE);
  const found = (await page.evaluate(
    async ({ include, disable }) => {
      const axe = (globalThis as any).axe;
      const rules: Record<string, { enabled: boolean }> = {};
      for (const id of disable) rules[id] = { enabled: false };
      const result = await axe.run(include ? { include: [include] } : (globalThis as any).document, {
        runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
        rules,
        resultTypes: ['violations'],
      });
      return result.violations.map((v: any) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map((n: any) => n.target.join(' ')) }));
    },
    { include: options.include ?? null, disable: options.disable ?? [] },
  )) as A11yViolation[];
  const bad = found.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  for (const v of found.filter((x) => !bad.includes(x))) t.comment(`a11y ${label}: ${v.impact} ${v.id} (${v.help}) at ${v.nodes.join(', ')}`);
  t.same(
    bad.map((v) => `${v.impact} ${v.id}: ${v.help} at ${v.nodes.join(', ')}`),
    [],
    `accessibility (axe-core): no serious or critical violation on ${label}`,
  );
  return found;
}
