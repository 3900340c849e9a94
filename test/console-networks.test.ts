import t from 'tap';
import { checkA11y } from './helpers/a11y.js';
import { alertText, DESKTOP, launchBrowser, PHONE, signedInContext, snap } from './helpers/browser.js';
import { startApp } from './helpers/harness.js';
import { openSocket, pairScreen } from './helpers/screens.js';

t.test('networks: create, add screens, order, leader, identify, rename, bad inputs, screen page membership, delete', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  const context = await browser.newContext({ viewport: DESKTOP, timezoneId: 'UTC' });
  const owner = await signedInContext(app, context, app.url);
  const call = async (method: string, path: string, json?: unknown, headers: Record<string, string> = {}) =>
    app.json(path, { method, headers: { ...owner.headers, ...headers }, ...(json === undefined ? {} : { json }) });
  const left = await pairScreen(app, owner, { name: 'Left' });
  const right = await pairScreen(app, owner, { name: 'Right' });
  const other = await pairScreen(app, owner, { name: 'Elsewhere' });
  const socket = await openSocket(t, app, left.credential);
  // A screen already in another network: adding it here is refused (409 naming it).
  const taken = await call('POST', '/api/v1/presentation-networks', { name: 'Back room', screenIds: [other.screenId] });
  t.equal(taken.status, 201);

  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  t.teardown(async () => {
    if (!t.passing()) await snap(page, 'failure-console-networks').catch(() => {});
  });

  await page.goto(`${app.url}/`);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Networks' }).click();
  await page.getByRole('heading', { name: 'Networks', level: 1 }).waitFor();
  await page.locator('tr[data-network="Back room"]').waitFor();
  // Bad input: an empty name is the server's 400, said in place.
  await page.getByRole('button', { name: 'Create network' }).click();
  t.match(await alertText(page), /name|least|empty|too small/i, 'an empty name is refused in words');
  await page.getByLabel('New network name').fill('Counter');
  await page.getByRole('button', { name: 'Create network' }).click();
  await page.getByRole('heading', { name: 'Counter', level: 1 }).waitFor();
  const id = new URL(page.url()).pathname.split('/').pop()!;
  await page.getByText('No screens yet.').waitFor();

  // Add two screens; the first leads.
  for (const name of ['Left', 'Right']) {
    await page.getByLabel('Screen to add').selectOption({ label: name });
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.locator(`tr[data-member="${name}"]`).waitFor();
  }
  let net = (await call('GET', `/api/v1/presentation-networks/${id}`)).body.data;
  t.same(
    net.screens.map((s: { name: string }) => s.name),
    ['Left', 'Right'],
    'members in the order added',
  );
  t.equal(net.leaderScreenId, left.screenId, 'the first leads by default');
  t.match(await page.locator('tr[data-member="Left"]').innerText(), /Online/, 'the connected screen is online');
  t.match(await page.locator('tr[data-member="Right"]').innerText(), /Offline/, 'the other is not');

  // Bad input: a screen in another network is refused with its name.
  await page.getByLabel('Screen to add').selectOption({ label: 'Elsewhere' });
  await page.getByRole('button', { name: 'Add', exact: true }).click();
  t.match(await alertText(page), /Elsewhere|another network|Back room/, 'a screen in another network is refused in words');

  // Reorder: Right up; then choose Right as leader.
  await page.getByRole('button', { name: 'Move Right up' }).click();
  await page.locator('table[data-testid=members] tbody tr:first-child[data-member="Right"]').waitFor();
  await page.getByLabel('Make Right the leader').click();
  await page.getByText('Right leads now.').waitFor();
  net = (await call('GET', `/api/v1/presentation-networks/${id}`)).body.data;
  t.same(
    net.screens.map((s: { name: string; position: number }) => [s.name, s.position]),
    [
      ['Right', 0],
      ['Left', 1],
    ],
    'the order was saved',
  );
  t.equal(net.leaderScreenId, right.screenId, 'the chosen leader was saved');

  // Identification pattern: sent to the connected member.
  await page.getByRole('button', { name: 'Show identification pattern' }).click();
  await page.getByText(/identification pattern shows for 30 seconds on 1 connected screen/).waitFor();
  t.ok(
    socket.messages.some((m) => m.type === 'network.test'),
    'the member got network.test',
  );

  // Rename (If-Match), and a stale rename is refused in words.
  await page.getByRole('button', { name: 'Rename' }).click();
  await page.getByLabel('Name', { exact: true }).fill('Counter boards');
  await page.getByRole('button', { name: 'Save name' }).click();
  await page.getByRole('heading', { name: 'Counter boards', level: 1 }).waitFor();
  await page.getByRole('button', { name: 'Rename' }).click();
  t.equal((await call('PATCH', `/api/v1/presentation-networks/${id}`, { name: 'Changed elsewhere' })).status, 200);
  await page.getByLabel('Name', { exact: true }).fill('Mine');
  await page.getByRole('button', { name: 'Save name' }).click();
  const stale = await alertText(page, 'form[aria-label="Rename network"]');
  t.comment(`stale rename: ${stale}`);
  t.match(stale, /changed|conflict|version|meanwhile|reload/i, 'a stale rename is refused in words');
  t.equal((await call('GET', `/api/v1/presentation-networks/${id}`)).body.data.name, 'Changed elsewhere', 'nothing overwritten');
  await page.reload();
  await page.getByRole('heading', { name: 'Changed elsewhere', level: 1 }).waitFor();
  await checkA11y(page, t, 'network page');
  await snap(page, 'console-networks-desktop');

  // The screen page shows its membership with a link; an admin takes it out and puts it back.
  await page.goto(`${app.url}/screens/${right.screenId}`);
  const panel = page.getByTestId('screen-network');
  await panel.getByText(/position 1 of 2/).waitFor();
  t.equal(await panel.getByRole('link', { name: 'Changed elsewhere' }).getAttribute('href'), `/networks/${id}`, 'links to the network');
  await panel.getByRole('button', { name: 'Take out of the network' }).click();
  await panel.getByText('Not in a network').waitFor();
  t.equal((await call('GET', `/api/v1/screens/${right.screenId}/presentation-network`)).body.data, null, 'it left');
  await panel.getByLabel('Network to join').selectOption({ label: 'Changed elsewhere' });
  await panel.getByRole('button', { name: 'Join network' }).click();
  await panel.getByText(/position 2 of 2/).waitFor();
  await checkA11y(page, t, 'screen page with network');

  // Phone width: the network page still works.
  await page.setViewportSize(PHONE);
  await page.goto(`${app.url}/networks/${id}`);
  await page.locator('tr[data-member="Right"]').waitFor();
  await snap(page, 'console-networks-phone');

  // Delete: the confirmation names the screens that stop playing in step.
  await page.setViewportSize(DESKTOP);
  await page.getByRole('button', { name: 'Delete network' }).click();
  const dialog = page.locator('dialog.confirm-dialog');
  await dialog.waitFor();
  const said = await dialog.innerText();
  t.match(said, /Left/, 'names Left');
  t.match(said, /Right/, 'names Right');
  await dialog.getByRole('button', { name: 'Delete network' }).click();
  await page.getByRole('heading', { name: 'Networks', level: 1 }).waitFor();
  t.equal((await call('GET', `/api/v1/presentation-networks/${id}`)).status, 404, 'deleted');

  // A viewer reads but does not change.
  const viewerContext = await browser.newContext({ viewport: DESKTOP, timezoneId: 'UTC' });
  await signedInContext(app, viewerContext, app.url, 'viewer');
  const viewer = await viewerContext.newPage();
  await viewer.goto(`${app.url}/networks/${taken.body.data.id}`);
  await viewer.locator('tr[data-member="Elsewhere"]').waitFor();
  t.equal(await viewer.getByRole('button', { name: 'Delete network' }).count(), 0, 'a viewer cannot delete');
  t.equal(await viewer.getByLabel('Screen to add').count(), 0, 'nor add screens');
  t.same(errors, [], 'no page errors');
});
