import t from 'tap';
import { ROUTES } from '../server/src/routes.js';
import { authKinds } from '../server/src/platform/http/route.js';
import { signIn } from './helpers/auth.js';
import { startApp } from './helpers/harness.js';

const ID = '0190f5a2-7b3c-7def-8abc-0123456789ab';
const concrete = (path: string) => path.replace(/\{id\}|\{\w*Id\}/g, ID).replace(/\{\w+\}/g, 'x');

t.test('every registered route enforces its auth kind', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const deviceLike = { authorization: 'Bearer svc_device_abcdefgh.abcdefghijklmnopqrstuvwxyz' };
  let checked = 0;
  for (const route of ROUTES) {
    const kinds = authKinds(route);
    if (kinds.includes('public')) continue;
    const path = concrete(route.path);
    const init = (headers: Record<string, string>) => ({
      method: route.method,
      headers: { ...headers, ...(route.body ? { 'content-type': 'application/json' } : {}) },
      ...(route.body ? { body: '{}' } : {}),
    });
    const label = `${route.method} ${route.path}`;

    const anonymous = await app.json(path, init({}));
    t.equal(anonymous.status, 401, `${label} without a credential`);

    if (!kinds.includes('device')) {
      const res = await app.json(path, init(deviceLike));
      t.equal(res.status, 401, `${label} with a device credential`);
    }
    if (!kinds.includes('session')) {
      const res = await app.json(path, init(owner.headers));
      t.equal(res.status, 401, `${label} with a console session`);
    }
    checked++;
  }
  t.ok(checked >= 15, `walked ${checked} authenticated routes`);
});
