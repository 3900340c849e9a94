import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { getSettings } from '../server/src/modules/system/settings.js';
import { signIn } from './helpers/auth.js';
import { launchBrowser, snap } from './helpers/browser.js';
import { adminPage, checkAccessibility, openAdmin, snapBoth } from './helpers/console-admin.js';
import { startApp, tempDataDir } from './helpers/harness.js';

const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
const backupFiles = (dataDir: string) => readdirSync(path.join(dataDir, 'backups')).filter((n) => n.endsWith('.tar') && !n.startsWith('.'));

/** Records every text the progress box shows (it may come and go between two polls). */
async function watchProgress(page: import('playwright-core').Page) {
  await page.evaluate(() => {
    const w = globalThis as any;
    w.progressSeen = [];
    new w.MutationObserver(() => {
      const box = w.document.querySelector('[data-testid="run-progress"]');
      if (box) w.progressSeen.push(box.innerText.replace(/\s+/g, ' '));
    }).observe(w.document.body, { subtree: true, childList: true, characterData: true });
  });
}

t.test('console: backups are made with progress, downloaded, uploaded, restored and deleted; settings move with a preview', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  const { page, who, errors } = await adminPage(browser, app);
  const downloads = tempDataDir(t);
  t.teardown(async () => {
    if (!t.passing()) await page.screenshot({ path: 'test/artifacts/failure-console-admin-backups.png', fullPage: true }).catch(() => {});
  });
  // Something in the media store, so the backup carries files.
  await import('node:fs').then((fs) => {
    fs.mkdirSync(path.join(app.dataDir, 'media', 'ab'), { recursive: true });
    fs.writeFileSync(path.join(app.dataDir, 'media', 'ab', 'picture.bin'), Buffer.alloc(256 * 1024, 7));
  });

  await page.goto(`${app.url}/`);
  await openAdmin(page, 'Backups');
  await page.getByText('No backups yet.').waitFor();
  await checkAccessibility(t, page, 'backups (empty)');

  // Make one: the progress shows, then the backup is in the list and on disk.
  await watchProgress(page);
  await page.getByRole('button', { name: 'Make a backup now' }).click();
  await page.getByText(/^Backup made:/).waitFor();
  const seen: string[] = await page.evaluate(() => (globalThis as any).progressSeen);
  t.ok(
    seen.some((s) => /Making the backup \d+%/.test(s)),
    `the progress was shown (${seen.slice(0, 3).join(' | ')})`,
  );
  let files = backupFiles(app.dataDir);
  t.equal(files.length, 1, 'a backup file exists on the server');
  const made = files[0]!;
  const row = page.locator(`tr[data-backup="${made}"]`);
  await row.waitFor();
  t.match(await row.innerText(), /Made by hand[\s\S]*Everything/, 'listed as made by hand, with everything');

  // Download it: the same bytes as the file on the server.
  const [download] = await Promise.all([page.waitForEvent('download'), row.getByRole('button', { name: /Download/ }).click()]);
  const saved = path.join(downloads, download.suggestedFilename());
  await download.saveAs(saved);
  t.equal(sha(saved), sha(path.join(app.dataDir, 'backups', made)), 'the download is the backup');

  // Made after the backup: the restore must take it away.
  const after = await app.json('/api/v1/locations', {
    method: 'POST',
    headers: who.headers,
    json: { name: 'Made after the backup', timeZone: 'Europe/Paris' },
  });
  t.equal(after.status, 201);

  // Upload: a file that is not a backup is refused with the server's reason; the real one is kept.
  const junk = path.join(downloads, 'holiday-photos.tar');
  writeFileSync(junk, 'this is not a tar file at all');
  const upload = page.getByRole('form', { name: 'Upload a backup' });
  await upload.getByLabel('Backup file (.tar)').setInputFiles(junk);
  await upload.getByRole('button', { name: 'Upload' }).click();
  t.match(await upload.getByRole('alert').innerText(), /Not a usable backup/, 'a damaged file is refused on the form');
  t.equal(backupFiles(app.dataDir).length, 1, 'and not kept');
  await upload.getByLabel('Backup file (.tar)').setInputFiles(saved);
  await upload.getByRole('button', { name: 'Upload' }).click();
  await upload.getByText(/Uploaded and checked/).waitFor();
  files = backupFiles(app.dataDir);
  const uploaded = files.find((n) => n.includes('-uploaded'));
  t.ok(uploaded, 'the uploaded backup is on the server');
  const uploadedRow = page.locator(`tr[data-backup="${uploaded}"]`);
  t.match(await uploadedRow.innerText(), /Uploaded/);
  await snapBoth(page, 'admin-backups', t);

  // Restore asks first and says what happens.
  await uploadedRow.getByRole('button', { name: /Restore/ }).click();
  const dialog = page.getByRole('dialog', { name: 'Restore this backup?' });
  await dialog.waitFor();
  const words = await dialog.innerText();
  t.match(words, /Everything goes back to how it was on/, 'says the data goes back');
  t.match(words, /refuses changes until the restore is done/, 'says writes are drained and refused');
  t.match(words, /reloads the console/, 'says the console reloads');
  t.equal(await page.evaluate(() => (globalThis as any).document.activeElement?.textContent), 'Cancel', 'focus starts on Cancel');
  await checkAccessibility(t, page, 'restore confirmation');
  await snap(page, 'admin-backups-restore-dialog-1366', false);
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  t.equal(await page.getByRole('dialog').count(), 0, 'Cancel closes it and nothing happens');
  t.equal((await app.json('/api/v1/locations', { headers: who.headers })).body.data.items.length, 1, 'nothing restored');

  await watchProgress(page);
  await uploadedRow.getByRole('button', { name: /Restore/ }).click();
  await dialog.getByRole('button', { name: 'Restore' }).click();
  await page.getByText('The backup is restored.', { exact: false }).waitFor({ timeout: 60_000 });
  const restoreSeen: string[] = await page.evaluate(() => (globalThis as any).progressSeen ?? []);
  t.ok(
    restoreSeen.some((s) => /Restoring \d+%/.test(s)),
    'the restore showed its progress',
  );
  // The console reloads by itself; the session in the backup was this one, so it is still signed in.
  await page.waitForLoadState('load');
  await page.getByRole('heading', { name: /^(Backups|Sign in)$/ }).waitFor({ timeout: 30_000 });
  const locations = await app.deps.db.selectFrom('locations').select('name').execute();
  t.same(locations, [], 'the location made after the backup is gone: the data is the backup’s');

  // Delete asks, then the file is gone.
  if (await page.getByRole('heading', { name: 'Sign in' }).isVisible()) {
    await page.getByLabel('Email', { exact: true }).fill(who.user.email);
    await page.getByLabel('Password', { exact: true }).fill(who.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Backups' }).waitFor();
  }
  const madeRow = page.locator(`tr[data-backup="${made}"]`);
  await madeRow.getByRole('button', { name: /Delete/ }).click();
  const del = page.getByRole('dialog', { name: 'Delete this backup?' });
  await del.getByRole('button', { name: 'Delete' }).click();
  await madeRow.waitFor({ state: 'detached' });
  t.notOk(existsSync(path.join(app.dataDir, 'backups', made)), 'the deleted backup is gone from the disk');

  // Settings file: download, change, import with a preview first.
  const [exported] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download settings file' }).click()]);
  const exportFile = path.join(downloads, exported.suggestedFilename());
  await exported.saveAs(exportFile);
  t.match(exported.suggestedFilename(), /^placard-settings-\d{4}-\d{2}-\d{2}\.json$/);
  const doc = JSON.parse(readFileSync(exportFile, 'utf8'));
  t.equal(doc.format, 'placard-settings-export', 'the file is the export document itself');
  doc.sections.settings.data.serverName = 'Brasserie du Port';
  doc.sections.locations.data.push({
    id: '0190f5a2-7b3c-7def-8abc-0123456789d1',
    name: 'Terrace',
    timeZone: 'Europe/Paris',
    address: null,
    latitude: null,
    longitude: null,
    notes: null,
  });
  const edited = path.join(downloads, 'edited-settings.json');
  writeFileSync(edited, JSON.stringify(doc));
  const notJson = path.join(downloads, 'notes.json');
  writeFileSync(notJson, 'menu: soup of the day');
  await page.getByLabel('Import a settings file (.json)').setInputFiles(notJson);
  await page.getByText('This file is not a Placard settings file (it is not JSON).').waitFor();
  await page.getByLabel('Import a settings file (.json)').setInputFiles(edited);
  const preview = page.getByTestId('import-preview');
  await preview.waitFor();
  const previewText = await preview.innerText();
  t.match(previewText, /Changed: Server name \("Placard" -> "Brasserie du Port"\)/, 'the preview names the changed setting in words');
  t.match(previewText, /Locations: 1 new/, 'and the new location');
  t.equal((await getSettings(app.deps.db)).serverName, 'Placard', 'nothing applied before the click');
  await checkAccessibility(t, page, 'backups with an import preview');
  await snapBoth(page, 'admin-backups-import-preview', t);
  await preview.getByRole('button', { name: /^Apply \d+ changes?$/ }).click();
  await page.getByText(/^Imported:/).waitFor();
  t.equal((await getSettings(app.deps.db)).serverName, 'Brasserie du Port', 'the import reached the server');
  t.same(
    (await app.deps.db.selectFrom('locations').select('name').execute()).map((l) => l.name),
    ['Terrace'],
  );
  t.same(errors, [], 'no script errors');
});

t.test('console: an admin who is not an owner makes backups but cannot download, restore or delete them', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  await signIn(app);
  const context = await browser.newContext({ viewport: { width: 1366, height: 768 } });
  const admin = await signIn(app, { role: 'admin' });
  await context.addCookies(
    admin.headers.cookie
      .split('; ')
      .map((pair) => ({ name: pair.slice(0, pair.indexOf('=')), value: pair.slice(pair.indexOf('=') + 1), domain: '127.0.0.1', path: '/' })),
  );
  const page = await context.newPage();
  await page.goto(`${app.url}/backups`);
  await page.getByRole('heading', { name: 'Backups', level: 1 }).waitFor();
  await page.getByRole('button', { name: 'Make a backup now' }).click();
  await page.getByText(/^Backup made:/).waitFor();
  t.equal(backupFiles(app.dataDir).length, 1, 'an admin can make a backup');
  await page.locator('tr[data-backup]').waitFor();
  t.equal(await page.getByRole('button', { name: /Restore/ }).count(), 0, 'no Restore for an admin');
  t.equal(await page.getByRole('button', { name: /Download the backup/ }).count(), 0, 'no Download for an admin');
  t.equal(await page.getByRole('form', { name: 'Upload a backup' }).count(), 0, 'no upload for an admin');
  await page.getByText(/Only owners can download, upload, restore or delete backups/).waitFor();
  t.equal(
    await page.getByTestId('admin-menu').getByRole('link', { name: 'Integration tokens', includeHidden: true }).count(),
    0,
    'integration tokens are for owners only',
  );
});
