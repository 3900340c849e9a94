import type { Test } from 'tap';
import type { Browser, Page } from 'playwright-core';
import type { TestApp } from './harness.js';
import { signedInContext, snap, unfoldNav } from './browser.js';
import { checkA11y } from './a11y.js';

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
  await unfoldNav(page);
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

/** axe-core on the page (the shared helper, test/helpers/a11y.ts): fails on serious or critical violations. */
export async function checkAccessibility(t: Test, page: Page, what: string): Promise<void> {
  await checkA11y(page, t, what);
}
