import t from 'tap';
import { getSettings } from '../server/src/modules/system/settings.js';
import { signIn } from './helpers/auth.js';
import { startApp } from './helpers/harness.js';

t.test('settings: the server default locale is validated, stored canonical, exported and imported', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const viewer = await signIn(app, { role: 'viewer' });

  let res = await app.json('/api/v1/settings', { headers: viewer.headers });
  t.equal(res.body.data.locale, null, 'none by default: each browser’s own');

  for (const bad of ['not a locale!!', 'x', 'en_US_POSIX_TOO_LONG_FOR_ANY_TAG_AT_ALL', 42, '']) {
    res = await app.json('/api/v1/settings', { method: 'PATCH', headers: owner.headers, json: { locale: bad } });
    t.equal(res.status, 400, `${JSON.stringify(bad)} is refused`);
    t.equal(res.body.error.code, 'validation_failed');
    t.same(
      res.body.error.details.issues.map((i: { path: string[] }) => i.path[0]),
      ['locale'],
      'the field is named',
    );
  }
  t.equal((await getSettings(app.deps.db)).locale, null, 'nothing stored');

  res = await app.json('/api/v1/settings', { method: 'PATCH', headers: { ...owner.headers, 'if-match': '"0"' }, json: { locale: ' fr-fr ' } });
  t.equal(res.status, 200, JSON.stringify(res.body));
  t.equal(res.body.data.locale, 'fr-FR', 'stored in its canonical form');
  t.equal((await getSettings(app.deps.db)).locale, 'fr-FR');
  res = await app.json('/api/v1/settings', { method: 'PATCH', headers: viewer.headers, json: { locale: 'de-DE' } });
  t.equal(res.status, 403, 'viewers read, admins write');

  // Export carries it; an import onto another server applies it, and its preview names it.
  const exported = (await app.json('/api/v1/system/settings/export', { headers: owner.headers })).body.data;
  t.equal(exported.sections.settings.data.locale, 'fr-FR');
  const other = await startApp(t);
  const otherOwner = await signIn(other);
  const preview = await other.json('/api/v1/system/settings/import/preview', { method: 'POST', headers: otherOwner.headers, json: exported });
  const settingsSection = preview.body.data.sections.find((s: { key: string }) => s.key === 'settings');
  t.ok(
    settingsSection.changes.some((c: { name: string; action: string }) => c.name === 'locale' && c.action === 'update'),
    'the preview lists the locale',
  );
  await other.json('/api/v1/system/settings/import/apply', { method: 'POST', headers: otherOwner.headers, json: exported });
  t.equal((await getSettings(other.deps.db)).locale, 'fr-FR', 'applied');

  res = await app.json('/api/v1/settings', { method: 'PATCH', headers: owner.headers, json: { locale: null } });
  t.equal(res.body.data.locale, null, 'null goes back to each browser’s own');
});

t.test('a settings document stored before the locale existed reads with locale null (no migration needed)', async (t) => {
  const app = await startApp(t);
  await app.deps.db
    .insertInto('settings')
    .values({
      id: 1,
      data: JSON.stringify({ serverName: 'Old', timeZone: 'Europe/Paris' }),
      revision: 3,
      updated_at: new Date().toISOString(),
      updated_by: null,
    })
    .execute();
  const s = await getSettings(app.deps.db);
  t.equal(s.locale, null);
  t.equal(s.serverName, 'Old');
  await app.deps.db
    .updateTable('settings')
    .set({ data: JSON.stringify({ serverName: 'Old', locale: '%%bad%%' }) })
    .execute();
  const repaired = await getSettings(app.deps.db);
  t.equal(repaired.locale, null, 'a stored bad locale falls back to the default');
  t.equal(repaired.serverName, 'Old', 'and keeps the rest');
});
