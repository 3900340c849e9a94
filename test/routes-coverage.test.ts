import { execFileSync } from 'node:child_process';
import t from 'tap';
import { coverage, readSpecRoutes } from '../scripts/routes-coverage.js';
import { ROUTES } from '../server/src/routes.js';

t.test('docs/spec/routes.tsv holds the 282 method+path pairs of the spec', async (t) => {
  const spec = readSpecRoutes();
  t.equal(spec.length, 282);
  t.equal(new Set(spec.map((r) => `${r.method} ${r.path}`)).size, 282, 'no duplicates');
});

t.test('coverage matches routes by method and path shape, HEAD through GET', async (t) => {
  const spec = [
    { method: 'GET', path: '/a/{id}', section: 's1' },
    { method: 'HEAD', path: '/a/{id}', section: 's1' },
    { method: 'POST', path: '/b', section: 's2' },
  ];
  const result = coverage(spec, [
    { method: 'GET', path: '/a/{assetId}' },
    { method: 'GET', path: '/extra' },
  ]);
  t.equal(result.done, 2);
  t.same(
    result.missing.map((r) => r.path),
    ['/b'],
  );
  t.same(
    result.extensions.map((r) => r.path),
    ['/extra'],
  );
  t.same(result.sections.get('s2'), { total: 1, done: 0 });
});

t.test('npm run routes:coverage prints the table and the totals', async (t) => {
  const out = execFileSync(process.execPath, ['--import=tsx', 'scripts/routes-coverage.ts'], { encoding: 'utf8' });
  t.match(out, /4\.2 Health and provisioning\s+\d+ \/ 11/);
  const implemented = coverage(readSpecRoutes(), [...ROUTES]).done;
  t.match(out, new RegExp(`implemented ${implemented} of 282 spec routes`));
  t.ok(implemented >= 2, 'at least the health routes');
  const missing = 282 - implemented;
  if (missing > 0) {
    t.match(out, new RegExp(`missing \\(${missing}\\):`), 'the missing routes are listed');
    const first = coverage(readSpecRoutes(), [...ROUTES]).missing[0]!;
    t.match(out, `${first.method.padEnd(6)} ${first.path}`, 'by method and path');
  }
});
