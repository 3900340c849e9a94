import t from 'tap';
import { startApp } from './helpers/harness.js';

t.test('GET /healthz answers in the envelope', async (t) => {
  const app = await startApp(t);
  const res = await app.json('/healthz');
  t.equal(res.status, 200);
  t.equal(res.body.data.status, 'ok');
  t.match(res.body.data.version, /^\d+\.\d+\.\d+/);
  t.match(res.headers.get('x-request-id'), /^[0-9a-f-]{36}$/);
});
