import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { startServerProcess } from './helpers/server-process.js';

/**
 * Libraries a server needs only for some requests load at their first use, not at start
 * (docs/performance.md, "Idle memory"): a started, ready and idle server has not loaded them.
 * Their features are tested where they are used (passkeys, TOTP, feeds, widgets, media, TLS).
 */
const LAZY = [
  'sharp', // images: platform/media/sharp.ts; /readyz checks it in a child process
  '@simplewebauthn/server', // passkeys
  'otplib', // TOTP
  'qrcode', // TOTP enrolment, widgets
  'liquidjs', // the widget compiler
  'sanitize-html',
  'feedsmith', // data-source parsers
  'ical.js',
  'papaparse',
  'jsonpath-plus',
  'htmlparser2',
  'file-type', // upload sniffing
  'fast-xml-parser', // CAP/Atom weather feeds
  '@peculiar/x509', // issuing a TLS certificate
  'koa-body', // multipart uploads only (platform/http/receive-file.ts); JSON bodies: platform/http/json-body.ts
  'formidable',
  'koa-session', // console sessions: modules/accounts/sessions.ts loads it at the first request that needs one
];

t.test('a started, ready server has not loaded the libraries of occasional work', async (t) => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'placard-startup-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const server = await startServerProcess(t, dataDir, {}, { script: 'test/helpers/loaded-packages-server.ts' });
  const ready = await fetch(`${server.url}/readyz`);
  const readiness = (await ready.json()) as { data: { checks: Record<string, { ok: boolean; detail: string }> } };
  t.equal(ready.status, 200, 'ready');
  t.equal(readiness.data.checks.sharp?.ok, true, 'sharp runs (checked in a child process)');
  t.match(readiness.data.checks.sharp?.detail, /^sharp \d+\.\d+\.\d+ \(libvips \d+\.\d+/);
  await new Promise((r) => setTimeout(r, 500)); // the start-up's own tool checks settle
  const res = await fetch(`${server.url}/api/v1/test-startup/packages`);
  t.equal(res.status, 200);
  const { packages } = ((await res.json()) as { data: { packages: string[] } }).data;
  t.ok(packages.includes('koa') && packages.includes('zod'), 'the scan sees the packages start-up loads');
  t.same(
    LAZY.filter((p) => packages.includes(p)),
    [],
    'none of them is loaded',
  );
  server.child.kill('SIGTERM');
  t.equal((await server.exited).code, 0, 'stops cleanly');
});
