import t from 'tap';
import { authKinds } from '../server/src/platform/http/route.js';
import { ROUTES } from '../server/src/routes.js';
import { signIn } from './helpers/auth.js';
import { startApp } from './helpers/harness.js';

/**
 * Hostile input never makes a 500: every console and public route that takes a body or a
 * query gets malformed, mistyped, oversized and odd values, signed in as an owner, and
 * must answer a client error (or success) in the envelope. New routes join automatically.
 */
const ID = '0190f5a2-7b3c-7def-8abc-0123456789ab';
const concrete = (path: string) => path.replace(/\{id\}|\{\w*Id\}/g, ID).replace(/\{\w+\}/g, 'x');

let nested: unknown = 1;
for (let i = 0; i < 200; i++) nested = { a: nested };

const BODIES: [string, string][] = [
  ['an array', '[]'],
  ['null', 'null'],
  ['a number', '42'],
  ['prototype keys', '{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}'],
  ['deep nesting', JSON.stringify(nested)],
  [
    'wrong types everywhere',
    JSON.stringify({
      name: 1,
      email: [],
      password: {},
      role: 7,
      code: null,
      id: true,
      items: 'x',
      limit: -1,
      capabilities: 'all',
      response: 'x',
      totp: 1,
      passkey: [],
    }),
  ],
  ['long strings', JSON.stringify({ name: 'x'.repeat(100_000), email: `${'a'.repeat(300)}@x.test`, displayName: '\u0000\u202e'.repeat(1000) })],
  ['unicode oddities', JSON.stringify({ name: '\ud800', email: 'é@ß.test', password: '\u0000'.repeat(20) })],
  ['truncated', '{"name": "x", "'],
];
const QUERIES = [
  '?limit=-1',
  '?limit=abc',
  '?limit=99999999999999999999',
  '?cursor=%00%ff',
  `?cursor=${'A'.repeat(600)}`,
  '?q=%25%27%22%3B--',
  '?limit=1&limit=2',
];

t.test('hostile input answers a client error in the envelope, never a 500', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  let requests = 0;
  for (const route of ROUTES) {
    const kinds = authKinds(route);
    if (!kinds.includes('session') && !kinds.includes('public')) continue;
    if (route.path === '/api/v1/auth/logout') continue; // would end the session under test
    const path = concrete(route.path);
    const variants: { label: string; path: string; body?: string }[] = [];
    if (route.body) for (const [label, body] of BODIES) variants.push({ label, path, body });
    if (route.query) for (const q of QUERIES) variants.push({ label: q, path: path + q });
    if (route.params) variants.push({ label: 'odd id', path: route.path.replace(/\{[^}]+\}/g, '%2e%2e%2f%00') });
    for (const v of variants) {
      const res = await app.fetch(v.path, {
        method: route.method,
        headers: { ...owner.headers, ...(v.body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(v.body !== undefined ? { body: v.body } : {}),
      });
      requests++;
      const text = await res.text();
      t.ok(res.status < 500, `${route.method} ${route.path} with ${v.label}: ${res.status} ${text.slice(0, 200)}`);
      if (res.status >= 400 && route.method !== 'HEAD') {
        // HEAD answers carry no body by definition (the status is checked above).
        const body = JSON.parse(text) as { error?: { code?: string; message?: string } };
        t.ok(body.error?.code && body.error.message, `${route.method} ${route.path} with ${v.label}: envelope`);
      }
    }
  }
  t.ok(requests > 50, `${requests} hostile requests`);
});
