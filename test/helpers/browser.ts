import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Test } from 'tap';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { signIn } from './auth.js';
import type { TestApp } from './harness.js';

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
    if (stale()) execFileSync(path.join(ROOT, 'node_modules', '.bin', 'vite'), ['build', '--config', 'console/vite.config.ts', '--logLevel', 'warn'], { cwd: ROOT, stdio: 'inherit' });
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
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  return authenticatorId;
}

/** A browser context signed in as `role` through the real API (cookie copied in). */
export async function signedInContext(app: TestApp, context: BrowserContext, base: string, role: 'owner' | 'editor' | 'viewer' = 'owner') {
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

