import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { startServerProcess } from './helpers/server-process.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Libraries a server needs only for some requests load at their first use, not at start
 * (docs/performance.md, "Idle memory"): a started, ready and idle server has not loaded them.
 * Their features are tested where they are used (passkeys, TOTP, feeds, widgets, media, TLS).
 * Checked for the source run by tsx and for the bundled build (scripts/build-server.mjs), whose
 * code splitting must keep each `await import()` a chunk of its own.
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

/** The npm package a script (or a bundled file named in a chunk's source map) comes from. */
const packageOf = (file: string) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file)?.[1];

/**
 * The build as `npm run build:server` makes it, into a scratch package (its own package.json,
 * the checkout's node_modules for the packages left external), started with the preload that
 * lists the scripts it loads; resolves once it listens.
 */
async function startBundle(t: Test, env: Record<string, string>) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'placard-startup-bundle-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const built = spawnSync(process.execPath, [path.join(ROOT, 'scripts/build-server.mjs'), '--outdir', path.join(dir, 'pkg/server/src')], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  t.equal(built.status, 0, `built${built.stderr ? `: ${built.stderr}` : ''}`);
  copyFileSync(path.join(ROOT, 'package.json'), path.join(dir, 'pkg/package.json'));
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'pkg/node_modules'), 'dir');
  t.ok(existsSync(path.join(dir, 'pkg/server/src/cli.js')), 'the CLI is built beside the server');

  const scriptsFile = path.join(dir, 'scripts.json');
  const child = spawn(process.execPath, [`--import=${path.join(ROOT, 'test/helpers/loaded-scripts-preload.mjs')}`, path.join(dir, 'pkg/server/src/main.js')], {
    cwd: ROOT,
    env: {
      ...process.env,
      PLACARD_DATA_DIR: path.join(dir, 'data'),
      PLACARD_PORT: '0',
      PLACARD_HTTPS_PORT: '0',
      PLACARD_HOST: '127.0.0.1',
      PLACARD_LOG_LEVEL: 'info',
      LOADED_SCRIPTS_FILE: scriptsFile,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let out = '';
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the bundle did not start:\n${out}`)), 60_000);
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /"url":"(http:\/\/[^"]+)"/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    void exited.then(() => reject(new Error(`the bundle exited before listening:\n${out}`)));
  });

  /** Packages loaded so far: node_modules scripts by path, the bundle's chunks by their source maps. */
  const loaded = async (): Promise<string[]> => {
    rmSync(scriptsFile, { force: true });
    child.kill('SIGUSR2');
    for (let i = 0; i < 100 && !existsSync(scriptsFile); i++) await new Promise((r) => setTimeout(r, 50));
    const packages = new Set<string>();
    let chunks = 0;
    for (const u of JSON.parse(readFileSync(scriptsFile, 'utf8')) as string[]) {
      const direct = packageOf(u);
      if (direct) packages.add(direct);
      else if (u.startsWith('file:') && fileURLToPath(u).startsWith(path.join(dir, 'pkg/server/'))) {
        chunks++;
        const map = JSON.parse(readFileSync(`${fileURLToPath(u)}.map`, 'utf8')) as { sources: string[] };
        for (const source of map.sources) {
          const p = packageOf(source);
          if (p) packages.add(p);
        }
      }
    }
    t.ok(chunks > 0, "the bundle's files were seen");
    return [...packages].sort();
  };
  return { child, url, exited, output: () => out, loaded };
}

t.test('the bundled build: same, its lazy chunks load at first use', async (t) => {
  const server = await startBundle(t, {});
  const ready = await fetch(`${server.url}/readyz`);
  const readiness = (await ready.json()) as { data: { checks: Record<string, { ok: boolean; detail: string }> } };
  t.equal(ready.status, 200, 'ready');
  t.equal(readiness.data.checks.sharp?.ok, true, 'sharp (external) runs');
  t.equal(readiness.data.checks.database?.ok, true, 'better-sqlite3 (external) answers');
  await new Promise((r) => setTimeout(r, 500)); // the start-up's own tool checks settle
  const packages = await server.loaded();
  t.ok(packages.includes('koa') && packages.includes('zod') && packages.includes('kysely'), 'the scan sees the bundled packages start-up loads');
  t.same(
    LAZY.filter((p) => packages.includes(p)),
    [],
    'none of them is loaded',
  );

  // A request that needs a session loads koa-session's chunk, and it works.
  const status = await fetch(`${server.url}/api/v1/auth/status`);
  t.equal(status.status, 200, 'the session route answers');
  await status.arrayBuffer();
  t.ok((await server.loaded()).includes('koa-session'), 'koa-session loaded at its first use');

  server.child.kill('SIGTERM');
  t.equal(await server.exited, 0, 'stops cleanly');
});

t.test('the bundled build with HTTPS issues its certificate (@peculiar/x509, loaded lazily, named exports)', async (t) => {
  const server = await startBundle(t, { PLACARD_HTTPS_PORT: String(await freePort()) });
  t.match(server.output(), /"tlsFingerprint":"([0-9A-F]{2}:){31}[0-9A-F]{2}"/, 'a certificate was issued at first start');
  t.ok((await server.loaded()).includes('@peculiar/x509'), 'by @peculiar/x509');
  const ready = await fetch(`${server.url}/readyz`);
  t.equal(ready.status, 200, 'ready');
  await ready.arrayBuffer();
  server.child.kill('SIGTERM');
  t.equal(await server.exited, 0, 'stops cleanly');
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}
