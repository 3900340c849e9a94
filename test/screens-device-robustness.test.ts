import t from 'tap';
import { authKinds } from '../server/src/platform/http/route.js';
import { ROUTES } from '../server/src/routes.js';
import { signIn } from './helpers/auth.js';
import { startApp } from './helpers/harness.js';
import { pairScreen } from './helpers/screens.js';

/** The robustness walk for device routes (the shared walk covers console and public ones). */
const ID = '0190f5a2-7b3c-7def-8abc-0123456789ab';
let nested: unknown = 1;
for (let i = 0; i < 200; i++) nested = { a: nested };
const BODIES: [string, string][] = [
  ['an array', '[]'],
  ['null', 'null'],
  ['prototype keys', '{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}'],
  ['deep nesting', JSON.stringify(nested)],
  ['wrong types', JSON.stringify({ status: 1, noiseMeter: [], playerFamily: {}, screenshot: 'x', output: 5, message: [], currentPlaylistId: 7 })],
  [
    'noise oddities',
    JSON.stringify({
      noiseMeter: {
        currentLevel: 1e308,
        pendingHistory: [{ startedAt: '9999-12-31T23:59:50Z', averageLevel: -0, peakLevel: 0, monitoredMs: 0, warningMs: 0, loudMs: 0 }],
      },
    }),
  ],
  ['bad base64', JSON.stringify({ status: 'succeeded', screenshot: { contentType: 'image/png', dataBase64: '!!!!' } })],
  ['unicode', JSON.stringify({ playerVersion: '\ud800', deviceName: '\u0000'.repeat(50) })],
  ['truncated', '{"noiseMeter": {'],
];

t.test('device routes answer hostile input with a client error in the envelope, never a 500', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const screen = await pairScreen(app, owner);
  let n = 0;
  for (const route of ROUTES) {
    if (!authKinds(route).includes('device')) continue;
    if (!route.path.startsWith('/api/v1/player/')) continue;
    const path = route.path.replace(/\{[^}]+\}/g, ID);
    const variants = route.body ? BODIES : [['no body', undefined] as [string, undefined]];
    for (const [label, body] of variants) {
      const res = await app.fetch(path, {
        method: route.method,
        headers: { ...screen.headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body } : {}),
      });
      const text = await res.text();
      n++;
      t.ok(res.status < 500, `${route.method} ${route.path} with ${label}: ${res.status} ${text.slice(0, 160)}`);
      if (res.status >= 400 && route.method !== 'HEAD') t.ok(JSON.parse(text).error?.code, `${route.method} ${route.path} with ${label}: envelope`);
    }
  }
  t.ok(n > 20, `${n} requests`);
});
