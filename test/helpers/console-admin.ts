import { createRequire } from 'node:module';
import type { Test } from 'tap';
import type { Browser, Page } from 'playwright-core';
import type { TestApp } from './harness.js';
import { signedInContext, snap } from './browser.js';

/** The sizes the administration pages are checked at (a café's laptop and a phone). */
export const LAPTOP = { width: 1366, height: 768 };
export const PHONE = { width: 390, height: 844 };

/** A page signed in as `role` through the real API, at `viewport`. */
export async function adminPage(browser: Browser, app: TestApp, role: 'owner' | 'editor' | 'viewer' = 'owner', viewport = LAPTOP) {
  const context = await browser.newContext({ viewport, acceptDownloads: true });
  const who = await signedInContext(app, context, app.url, role);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  return { context, page, who, errors };
}

/** Opens an entry of the Administration menu in the main navigation, as a user would. */
export async function openAdmin(page: Page, label: string, heading = label): Promise<void> {
  await page.getByTestId('admin-menu').locator('summary').click();
  await page.getByTestId('admin-menu').getByRole('link', { name: label, exact: true }).click();
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
}

/** No sideways scrolling: the page is no wider than the viewport. */
export async function assertNoSideScroll(t: Test, page: Page, what: string): Promise<void> {
  const width = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number);
  t.ok(width <= page.viewportSize()!.width, `${what}: no sideways scrolling (${width}px)`);
}

/** Screenshots at the laptop and phone sizes (test/artifacts/<name>-1366.png, -390.png); the page is left at the laptop size. */
export async function snapBoth(page: Page, name: string, t?: Test): Promise<void> {
  await page.setViewportSize(LAPTOP);
  await snap(page, `${name}-1366`);
  await page.setViewportSize(PHONE);
  await page.waitForTimeout(150);
  if (t) await assertNoSideScroll(t, page, name);
  await snap(page, `${name}-390`);
  await page.setViewportSize(LAPTOP);
}

const require = createRequire(import.meta.url);

/**
 * axe-core's serious and critical violations on the page, when axe-core is installed (the
 * shared axe helper of the browser tests supersedes this one where it exists). Answers null
 * when axe-core is not there.
 */
export async function axeViolations(page: Page): Promise<string[] | null> {
  let source: string;
  try {
    const { readFileSync } = await import('node:fs');
    source = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  } catch {
    return null;
  }
  // Evaluated through the debugging protocol: the console's CSP (script-src 'self') refuses inline script tags.
  if (!(await page.evaluate(() => Boolean((globalThis as any).axe)))) await page.evaluate(source);
  const result = await page.evaluate(async () => {
    const axe = (globalThis as any).axe;
    const r = await axe.run((globalThis as any).document, { resultTypes: ['violations'] });
    return r.violations.map((v: any) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 3).map((n: any) => n.target.join(' ')) }));
  });
  return (result as { id: string; impact: string; help: string; targets: string[] }[])
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.targets.join(', ')})`);
}

/** Fails the test on serious or critical axe violations (when axe-core is installed; says so when it is not). */
export async function checkAccessibility(t: Test, page: Page, what: string): Promise<void> {
  const violations = await axeViolations(page);
  if (violations === null) {
    t.comment(`axe-core is not installed: accessibility of ${what} not checked here`);
    return;
  }
  t.same(violations, [], `${what}: no serious or critical accessibility violations`);
}
