import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { checkA11y } from './helpers/a11y.js';
import { DESKTOP, launchBrowser, signedInContext, snap } from './helpers/browser.js';
import { startApp } from './helpers/harness.js';

/** The Add screen page's Linux install command (docs/trust.md); its own file: console-screens' journey fills that file's time. */

t.test('Add screen shows the Linux install command with this server’s key pinned; run as shown, it installs from the HTTPS listener', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t, { https: true });
  const ctx = await browser.newContext({ viewport: DESKTOP });
  await signedInContext(app, ctx, app.url, 'owner');
  const page = await ctx.newPage();
  t.teardown(async () => {
    if (!t.passing()) await snap(page, 'failure-console-install-command').catch(() => {});
    await ctx.close();
  });
  await page.goto(`${app.url}/screens/add`);
  const field = page.getByTestId('install-command');
  await field.waitFor();
  const command = await field.inputValue();
  const tls = app.tls!;
  t.equal(command, `curl -fsS --pinnedpubkey '${tls.pin}' -k ${app.httpsUrl}/install.sh | sudo sh -s -- --pin '${tls.pin}'`, 'the pinned command');
  t.equal(await page.getByTestId('tls-fingerprint').innerText(), tls.fingerprintSha256, 'with the certificate’s fingerprint');
  await snap(page, 'screens-add-install-1280-light');
  await checkA11y(page, t, 'add screen with the install command');

  // What the page shows works: run into a scratch root (sudo sh -> sh), from the HTTPS listener.
  if (spawnSync('sh', ['-c', 'command -v curl']).status !== 0) return t.comment('curl is not installed here');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'placard-install-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const root = path.join(dir, 'root');
  const run = await new Promise<{ status: number | null; out: string }>((resolve) => {
    const child = spawn('sh', ['-c', `${command.replace('| sudo sh -s --', '| sh -s --')} --root '${root}'`]);
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    child.on('close', (status) => resolve({ status, out }));
  });
  t.equal(run.status, 0, run.out);
  t.match(readFileSync(path.join(root, 'etc/placard-player/player.env'), 'utf8'), `PLACARD_PLAYER_URL=${app.httpsUrl}/play?kiosk=1`);

  // Without HTTPS the page says what is at stake.
  const plain = await startApp(t);
  const ctx2 = await browser.newContext({ viewport: DESKTOP });
  await signedInContext(plain, ctx2, plain.url, 'owner');
  t.teardown(() => ctx2.close());
  const page2 = await ctx2.newPage();
  await page2.goto(`${plain.url}/screens/add`);
  t.equal(await page2.getByTestId('install-command').inputValue(), `curl -fsSL ${plain.url}/install.sh | sudo sh`);
  t.match(await page2.getByTestId('linux-install').innerText(), /no HTTPS listener.*anyone on the network between could change it/s);
});
