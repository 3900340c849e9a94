import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Test } from 'tap';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { signIn } from './auth.js';
import { totpNow } from './totp.js';
import type { TestApp } from './harness.js';
import type { Role } from '../../server/src/platform/http/auth.js';

export const CHROMIUM = process.env.PLACARD_CHROMIUM ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'];
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CONSOLE_DIST = path.join(ROOT, 'console', 'dist');
export const ARTIFACTS = path.join(ROOT, 'test', 'artifacts');

function newestMtime(p: string): number {
  const st = statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const name of readdirSync(p)) newest = Math.max(newest, newestMtime(path.join(p, name)));
  return newest;
}

/**
 * Builds console/dist when it is missing or older than its sources (a local run after
 * editing the console); CI builds it before the tests. A lock directory keeps test files
 * running in parallel from building over each other.
 */
export async function ensureConsoleBuilt(): Promise<void> {
  const sources = ['src', 'public', 'index.html', 'play.html', 'vite.config.ts'].map((p) => path.join(ROOT, 'console', p)).filter(existsSync);
  const stale = () => {
    const built = path.join(CONSOLE_DIST, 'index.html');
    if (!existsSync(built) || !existsSync(path.join(CONSOLE_DIST, 'play.html'))) return true;
    return Math.max(...sources.map(newestMtime)) > statSync(built).mtimeMs;
  };
  if (!stale()) return;
  const lock = path.join(ROOT, 'console', '.build-lock');
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`console build lock ${lock} held for too long; remove it`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  try {
    if (stale())
      execFileSync(path.join(ROOT, 'node_modules', '.bin', 'vite'), ['build', '--config', 'console/vite.config.ts', '--logLevel', 'warn'], {
        cwd: ROOT,
        stdio: 'inherit',
      });
  } finally {
    rmdirSync(lock);
  }
}

/**
 * Debian's Chromium through playwright-core, or null when it is missing: the test is
 * skipped loudly, and fails instead when PLACARD_REQUIRE_BROWSER=1 (CI).
 */
export async function launchBrowser(t: Test): Promise<Browser | null> {
  if (!existsSync(CHROMIUM)) {
    const why = `${CHROMIUM} is missing: browser tests cannot run (apt-get install chromium)`;
    if (process.env.PLACARD_REQUIRE_BROWSER === '1') {
      t.fail(why);
    } else {
      process.stderr.write(`\n*** SKIPPED: ${why} ***\n\n`);
      t.pass(why, { skip: why });
    }
    return null;
  }
  await ensureConsoleBuilt();
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
  t.teardown(() => browser.close());
  return browser;
}

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/** Saves a screenshot under test/artifacts/ (ignored by git) for people to look at. */
export async function snap(page: Page, name: string, fullPage = true): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage });
  return file;
}

/** A Chromium virtual authenticator (CTAP2, resident keys, user verification) on the page's tab. */
export async function addVirtualAuthenticator(context: BrowserContext, page: Page): Promise<string> {
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return authenticatorId;
}

/** A browser context signed in as `role` through the real API (cookie copied in). */
export async function signedInContext(app: TestApp, context: BrowserContext, base: string, role: Role = 'owner') {
  const who = await signIn(app, { role });
  const url = new URL(base);
  await context.addCookies(
    who.headers.cookie.split('; ').map((pair) => {
      const i = pair.indexOf('=');
      return { name: pair.slice(0, i), value: pair.slice(i + 1), domain: url.hostname, path: '/' };
    }),
  );
  return who;
}

/** A new browser context (UTC) signed in as a new user of `role`, with a page. */
export async function contextAs(app: TestApp, browser: Browser, role: Role, viewport = DESKTOP) {
  const context = await browser.newContext({ viewport, timezoneId: 'UTC' });
  const who = await signedInContext(app, context, app.url, role);
  return { who, context, page: await context.newPage() };
}

/** The text of the first visible alert inside `scope`: the error shown where the user acted. */
export const alertText = (page: Page, scope = 'body') => page.locator(`${scope} [role=alert]`).first().innerText();

export interface Owner {
  name: string;
  email: string;
  password: string;
}

/**
 * First run in the browser: fills the setup form (the page must show it) and submits it;
 * resolves once the signed-in overview greets the owner.
 */
export async function setUpOwner(page: Page, owner: Owner): Promise<void> {
  await page.getByRole('heading', { name: 'Welcome to Placard' }).waitFor();
  await page.getByLabel('Your name').fill(owner.name);
  await page.getByLabel('Email', { exact: true }).fill(owner.email);
  await page.getByLabel('Password', { exact: true }).fill(owner.password);
  await page.getByLabel('Repeat the password').fill(owner.password);
  await page.getByRole('button', { name: 'Create owner account' }).click();
  await page.getByRole('heading', { name: `Hello, ${owner.name}` }).waitFor();
}

/** At phone width the navigation folds behind a Menu button: opens it when it is folded (no-op otherwise). */
export async function unfoldNav(page: Page): Promise<void> {
  const toggle = page.locator('button.menu-toggle');
  if ((await toggle.isVisible()) && (await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click();
}

/** Opens Account & security from the user menu and starts TOTP enrolment; answers the key shown for typing. */
export async function startTotp(page: Page): Promise<string> {
  if (!(await page.getByRole('heading', { name: 'Account & security' }).isVisible())) {
    await unfoldNav(page);
    await page.locator('details.user-menu summary').click();
    await page.locator('details.user-menu').getByRole('link', { name: 'Account & security' }).click();
    await page.getByRole('heading', { name: 'Account & security' }).waitFor();
  }
  await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
  await page.getByRole('img', { name: /QR code/ }).waitFor();
  return (await page.getByTestId('totp-secret').innerText()).trim();
}

/** Types the current code for `secret` (RFC 6238, test/helpers/totp.ts) and turns the app on. */
export async function confirmTotp(page: Page, secret: string): Promise<void> {
  await page.getByLabel('Code from the app').fill(totpNow(secret));
  await page.getByRole('button', { name: 'Turn on' }).click();
  await page.getByText('Authenticator app turned on').waitFor();
}

/** TOTP enrolment through the account page; answers the base32 key. */
export async function enrolTotp(page: Page): Promise<string> {
  const secret = await startTotp(page);
  await confirmTotp(page, secret);
  return secret;
}

/** Registers a passkey named `name` on the account page with Chromium's virtual authenticator (added here). */
export async function enrolPasskey(context: BrowserContext, page: Page, name: string): Promise<string> {
  const authenticatorId = await addVirtualAuthenticator(context, page);
  await page.getByLabel('New passkey name').fill(name);
  await page.getByRole('button', { name: 'Add a passkey' }).click();
  await page.getByRole('cell', { name, exact: true }).waitFor();
  return authenticatorId;
}

/** Signed in: the user menu shows the name (the page stays where the user signed out). */
export async function signedInAs(page: Page, name: string): Promise<void> {
  await page.locator('details.user-menu summary', { hasText: name }).waitFor({ state: 'attached' });
}

export async function signOut(page: Page): Promise<void> {
  await unfoldNav(page);
  await page.locator('details.user-menu summary').click();
  await page.locator('details.user-menu').getByRole('link', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
}

/**
 * The page's session as headers for app.json/app.fetch: the cookie, and the CSRF token the
 * page got from /auth/status, so a test can check (and do) through the API what the UI did.
 */
export async function sessionHeaders(page: Page): Promise<{ cookie: string; 'x-csrf-token': string }> {
  const cookies = await page.context().cookies();
  const cookie = cookies.map((c) => `${c.name}=${c.value}`).join('; ');
  const token = await page.evaluate(async () => {
    const res = await fetch('/api/v1/auth/status', { headers: { accept: 'application/json' } });
    return ((await res.json()) as { data: { csrfToken: string | null } }).data.csrfToken ?? '';
  });
  return { cookie, 'x-csrf-token': token };
}

/** Relative luminance (0 dark .. 1 light) of a CSS rgb()/rgba() colour; transparent or unknown counts as light. */
export function luminance(rgb: string): number {
  const [r, g, b, a] = (rgb.match(/\d+(\.\d+)?/g) ?? []).map(Number);
  if (r === undefined || g === undefined || b === undefined || a === 0) return 1;
  return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
}

/** Polls `fn` until it answers a value (not undefined/false); throws `timed out: what` after `timeoutMs`. */
export async function waitUntil<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined && v !== false) return v as T;
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

export type Rgb = { r: number; g: number; b: number };

/** The average colour of a 20 px square around (fx, fy), fractions of the page's viewport, from a real screenshot. */
export async function colourAt(page: Page, fx: number, fy: number): Promise<Rgb> {
  const { default: sharp } = await import('sharp');
  const view = page.viewportSize()!;
  const size = 20;
  const png = await page.screenshot();
  const left = Math.max(0, Math.min(view.width - size, Math.floor(view.width * fx - size / 2)));
  const top = Math.max(0, Math.min(view.height - size, Math.floor(view.height * fy - size / 2)));
  const { data } = await sharp(png).extract({ left, top, width: size, height: size }).resize(1, 1).raw().toBuffer({ resolveWithObject: true });
  return { r: data[0]!, g: data[1]!, b: data[2]! };
}

export function dominant(c: Rgb): 'red' | 'green' | 'blue' | 'other' {
  if (c.r > 150 && c.g < 90 && c.b < 90) return 'red';
  if (c.g > 130 && c.r < 90 && c.b < 90) return 'green';
  if (c.b > 150 && c.r < 90 && c.g < 90) return 'blue';
  return 'other';
}

/**
 * Pairs the /play page `player` (already open) through the console's API as `admin`:
 * reads its code, resolves and approves it as `name`; resolves with the screen id once
 * the page runs enrolled.
 */
export async function pairPlayPage(app: TestApp, admin: { headers: Record<string, string> }, player: Page, name: string): Promise<string> {
  const code = await waitUntil('pairing code', async () => {
    const text = (await player.getByTestId('pairing-code').textContent())?.trim() ?? '';
    return /^[A-Z0-9]{3}-?[A-Z0-9]{3}$/.test(text) ? text : undefined;
  });
  const resolved = await app.json('/api/v1/screens/pairing/resolve', { method: 'POST', headers: admin.headers, json: { code } });
  if (resolved.status !== 200) throw new Error(`resolve: ${resolved.status} ${JSON.stringify(resolved.body)}`);
  const approved = await app.json(`/api/v1/screens/pairing/${resolved.body.data.id}/approve`, { method: 'POST', headers: admin.headers, json: { name } });
  if (approved.status !== 200) throw new Error(`approve: ${approved.status} ${JSON.stringify(approved.body)}`);
  const screenId: string = approved.body.data.screen.id;
  await waitUntil('player enrolled', () =>
    player.evaluate((id) => {
      const p = (globalThis as any).placardPlayer;
      return p.state === 'running' && p.screenId === id;
    }, screenId),
  );
  return screenId;
}
