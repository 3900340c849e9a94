import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import t, { type Test } from 'tap';
import { addressRefusal, frameBlockers, OutboundError, safeFetch } from '../server/src/platform/http/outbound.js';
import { signIn } from './helpers/auth.js';
import { startApp, tempDataDir } from './helpers/harness.js';

const LOOPBACK = { allowPrivate: true, allowLoopback: true };

/** A local fake site: path -> handler. */
async function fakeSite(t: Test, routes: Record<string, (req: http.IncomingMessage, res: http.ServerResponse) => void>) {
  const server = http.createServer((req, res) => {
    const handler = routes[req.url ?? '/'];
    if (handler) handler(req, res);
    else res.writeHead(404).end('nope');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => server.close());
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

t.test('address policy (DESIGN.md section 9)', async (t) => {
  const strict = { allowPrivate: false, allowLoopback: false };
  const lan = { allowPrivate: true, allowLoopback: false };
  t.equal(addressRefusal('93.184.216.34', strict), null, 'public unicast is fine');
  t.match(addressRefusal('127.0.0.1', lan), /loopback/);
  t.match(addressRefusal('::1', lan), /loopback/);
  t.match(addressRefusal('::ffff:127.0.0.1', lan), /loopback/, 'IPv4-mapped loopback');
  t.match(addressRefusal('169.254.169.254', LOOPBACK), /metadata/, 'metadata refused even when loopback is allowed');
  t.match(addressRefusal('fe80::1', lan), /link-local/);
  t.match(addressRefusal('10.1.2.3', strict), /private/);
  t.equal(addressRefusal('192.168.1.20', lan), null, 'LAN dashboards when allowed');
  t.match(addressRefusal('0.0.0.0', LOOPBACK), /unspecified/);
  t.match(addressRefusal('224.0.0.1', LOOPBACK), /multicast/);
});

t.test('safeFetch: schemes, loopback, redirects re-checked, size and time limits', async (t) => {
  const base = await fakeSite(t, {
    '/ok': (_q, s) => s.writeHead(200, { 'content-type': 'text/html' }).end('<h1>hi</h1>'),
    '/hop': (_q, s) => s.writeHead(302, { location: '/ok' }).end(),
    '/to-metadata': (_q, s) => s.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end(),
    '/to-file': (_q, s) => s.writeHead(302, { location: 'file:///etc/passwd' }).end(),
    '/loop': (_q, s) => s.writeHead(302, { location: '/loop' }).end(),
    '/big': (_q, s) => s.writeHead(200).end(Buffer.alloc(100_000, 1)),
    '/slow': () => {},
  });
  await t.rejects(safeFetch(`${base}/ok`, { allowPrivate: true, allowLoopback: false }), { code: 'address_not_allowed' }, 'loopback refused by default');
  await t.rejects(
    safeFetch('http://localhost:1/ok', { allowPrivate: true, allowLoopback: false }),
    { code: 'address_not_allowed' },
    'a name resolving to loopback is refused at connect time',
  );
  await t.rejects(safeFetch('file:///etc/passwd', LOOPBACK), { code: 'scheme_not_allowed' });
  await t.rejects(safeFetch('http://user:pw@127.0.0.1/', LOOPBACK), { code: 'invalid_url' });
  const ok = await safeFetch(`${base}/hop`, LOOPBACK);
  t.equal(ok.status, 200);
  t.equal(ok.body.toString(), '<h1>hi</h1>');
  t.same(
    ok.redirects.map((r) => r.status),
    [302],
  );
  const meta = await safeFetch(`${base}/to-metadata`, LOOPBACK).catch((e: unknown) => e);
  t.ok(meta instanceof OutboundError && meta.code === 'address_not_allowed', 'a redirect to the metadata address is refused');
  t.equal((meta as OutboundError).redirects.length, 1);
  await t.rejects(safeFetch(`${base}/to-file`, LOOPBACK), { code: 'scheme_not_allowed' });
  await t.rejects(safeFetch(`${base}/loop`, LOOPBACK, { maxRedirects: 3 }), { code: 'too_many_redirects' });
  const big = await safeFetch(`${base}/big`, LOOPBACK, { maxBytes: 1000 });
  t.equal(big.body.length, 1000);
  t.equal(big.truncated, true);
  await t.rejects(safeFetch(`${base}/slow`, LOOPBACK, { timeoutMs: 300 }), { code: 'timeout' });
});

t.test('safeFetch: credentials stay with their origin; a redirect to another host gets none of them', async (t) => {
  const seen: Record<string, string | undefined>[] = [];
  const record = (q: http.IncomingMessage, s: http.ServerResponse) => {
    seen.push({
      authorization: q.headers.authorization,
      key: q.headers['x-api-key'] as string | undefined,
      cookie: q.headers.cookie,
      plain: q.headers['x-plain'] as string | undefined,
    });
    s.writeHead(200).end('ok');
  };
  const other = await fakeSite(t, { '/land': record });
  const base = await fakeSite(t, {
    '/same': (_q, s) => s.writeHead(302, { location: '/land' }).end(),
    '/land': record,
    '/away': (_q, s) => s.writeHead(302, { location: `${other}/land` }).end(),
  });
  const headers = { authorization: 'Bearer s3cret', 'X-Api-Key': 'k3y', cookie: 'a=b', 'x-plain': 'p' };
  await safeFetch(`${base}/same`, LOOPBACK, { headers, credentialHeaders: ['x-api-key'] });
  t.same(seen[0], { authorization: 'Bearer s3cret', key: 'k3y', cookie: 'a=b', plain: 'p' }, 'a redirect within the origin keeps every header');
  await safeFetch(`${base}/away`, LOOPBACK, { headers, credentialHeaders: ['x-api-key'] });
  t.same(seen[1], { authorization: undefined, key: undefined, cookie: undefined, plain: 'p' }, 'another origin (another port) gets no credential');
});

t.test('frame blockers', async (t) => {
  t.same(frameBlockers({ 'x-frame-options': 'DENY' }), ['X-Frame-Options: DENY']);
  t.same(frameBlockers({ 'x-frame-options': 'SAMEORIGIN' }), ['X-Frame-Options: SAMEORIGIN']);
  t.same(frameBlockers({ 'content-security-policy': "default-src 'self'; frame-ancestors 'none'" }), ["Content-Security-Policy frame-ancestors 'none'"]);
  t.same(frameBlockers({ 'content-security-policy': 'frame-ancestors *' }), []);
  t.same(frameBlockers({ 'content-type': 'text/html' }), []);
});

t.test('website assets and diagnostics', async (t) => {
  const base = await fakeSite(t, {
    '/board': (_q, s) => s.writeHead(200, { 'content-type': 'text/html' }).end('board'),
    '/locked': (_q, s) => s.writeHead(200, { 'x-frame-options': 'DENY', 'content-security-policy': "frame-ancestors 'self'" }).end('no frames'),
    '/moved': (_q, s) => s.writeHead(301, { location: '/board' }).end(),
    '/down': (_q, s) => s.writeHead(503).end(),
  });
  const app = await startApp(t, { config: { fetchAllowLoopback: true } });
  const owner = await signIn(app);
  const h = owner.headers;

  const created = await app.json('/api/v1/assets/websites', {
    method: 'POST',
    headers: h,
    json: { url: `${base}/moved`, refreshIntervalSec: 300, zoom: 1.25, viewport: { width: 1920, height: 1080 }, tags: ['dash'] },
  });
  t.equal(created.status, 201);
  const site = created.body.data;
  t.same([site.kind, site.state, site.name, site.tags], ['website', 'ready', new URL(base).host, ['dash']]);
  t.same(site.website, {
    url: `${base}/moved`,
    refreshIntervalSec: 300,
    zoom: 1.25,
    viewport: { width: 1920, height: 1080 },
    injectionEnabled: false,
    css: null,
    js: null,
  });

  const diag = await app.json(`/api/v1/assets/${site.id}/website/diagnostics`, { headers: h });
  t.equal(diag.status, 200);
  t.same([diag.body.data.reachable, diag.body.data.status, diag.body.data.frameable, diag.body.data.finalUrl], [true, 200, true, `${base}/board`]);
  t.same(
    diag.body.data.redirects.map((r: any) => r.status),
    [301],
  );

  const patched = await app.json(`/api/v1/assets/${site.id}/website`, {
    method: 'PATCH',
    headers: h,
    json: { url: `${base}/locked`, injectionEnabled: true, css: 'body{zoom:2}' },
  });
  t.equal(patched.status, 200);
  t.same(
    [patched.body.data.website.url, patched.body.data.website.injectionEnabled, patched.body.data.website.css, patched.body.data.website.zoom],
    [`${base}/locked`, true, 'body{zoom:2}', 1.25],
  );
  const locked = await app.json(`/api/v1/assets/${site.id}/website/diagnostics`, { headers: h });
  t.equal(locked.body.data.frameable, false);
  t.same(locked.body.data.frameBlockers, ['X-Frame-Options: DENY', "Content-Security-Policy frame-ancestors 'self'"]);
  t.equal(locked.body.data.headers.xFrameOptions, 'DENY');

  await app.json(`/api/v1/assets/${site.id}/website`, { method: 'PATCH', headers: h, json: { url: `${base}/down` } });
  const down = await app.json(`/api/v1/assets/${site.id}/website/diagnostics`, { headers: h });
  t.same([down.body.data.reachable, down.body.data.status, down.body.data.error.code], [true, 503, 'http_status']);

  await app.json(`/api/v1/assets/${site.id}/website`, { method: 'PATCH', headers: h, json: { url: 'http://169.254.169.254/latest/' } });
  const meta = await app.json(`/api/v1/assets/${site.id}/website/diagnostics`, { headers: h });
  t.same([meta.body.data.reachable, meta.body.data.error.code], [false, 'address_not_allowed']);

  t.equal((await app.json('/api/v1/assets/websites', { method: 'POST', headers: h, json: { url: 'javascript:alert(1)' } })).status, 400);
  t.equal((await app.json('/api/v1/assets/websites', { method: 'POST', headers: h, json: { url: 'ftp://example.test/' } })).status, 400);
  t.equal((await app.json(`/api/v1/assets/${site.id}/website`, { method: 'PATCH', headers: h, json: { zoom: 99 } })).status, 400);
  // A website gets a thumbnail in the background (test/console-support.test.ts checks what it shows).
  let thumb = 0;
  for (let i = 0; i < 100 && thumb !== 200; i++) {
    thumb = (await app.fetch(`/api/v1/assets/${site.id}/thumbnail`, { headers: h })).status;
    if (thumb !== 200) await new Promise((r) => setTimeout(r, 100));
  }
  t.equal(thumb, 200, 'a website has a thumbnail');
});

t.test('diagnostics report TLS problems (self-signed certificate on a local fake)', async (t) => {
  const dir = tempDataDir(t);
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  try {
    await promisify(execFile)('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
    ]);
  } catch {
    t.comment('openssl is not installed: TLS diagnostics not exercised here');
    return;
  }
  const server = https.createServer({ key: fs.readFileSync(key), cert: fs.readFileSync(cert) }, (_q, s) => s.end('secure'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => server.close());
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const err = await safeFetch(url, LOOPBACK).catch((e: unknown) => e);
  t.ok(err instanceof OutboundError, 'refused');
  t.equal((err as OutboundError).code, 'tls_error');
  t.match((err as OutboundError).message, /SELF_SIGNED|self.signed/i);

  const app = await startApp(t, { config: { fetchAllowLoopback: true } });
  const owner = await signIn(app);
  const site = await app.json('/api/v1/assets/websites', { method: 'POST', headers: owner.headers, json: { url } });
  const diag = await app.json(`/api/v1/assets/${site.body.data.id}/website/diagnostics`, { headers: owner.headers });
  t.same([diag.body.data.reachable, diag.body.data.error.code, diag.body.data.tls.authorized], [false, 'tls_error', false]);
});
