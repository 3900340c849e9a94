import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { gzipSync } from 'node:zlib';
import type { Context } from 'koa';
import tar from 'tar-stream';
import { z } from 'zod';
import { durableRename } from '../../platform/db/database.js';
import type { SessionPrincipal } from '../../platform/http/auth.js';
import { ApiError } from '../../platform/http/errors.js';
import { defineRoute, noContent, ok } from '../../platform/http/route.js';
import { contentDisposition, sendFile } from '../../platform/http/send-file.js';
import { SERVER_VERSION } from '../../version.js';
import { cachedSettings, effectivePublicUrl, getSettings, setMirroringReceiver, type MirroringReceiver } from '../system/index.js';
import { KeyedLocks } from '../../platform/media/locks.js';
import { open } from 'node:fs/promises';
import { mirroringInstallScript } from './mirroring-script.js';
import { PLAYER_SERVICE_SHA256, playerInstallScript, playerServiceUnit } from './player-script.js';
import { elfArchitecture, installCommand, safeServerUrl, type ScriptTarget } from './scripts.js';

const TAGS = ['Provisioning'];
export const PLAYER_ARCHITECTURES = ['x86_64', 'aarch64'] as const;
/** Where an uploaded mirroring receiver is kept, relative to the data directory (as `receiver-<sha256>`). */
export const MIRRORING_RECEIVER_DIR = path.join('releases', 'mirroring');
/** The largest receiver binary accepted (receivers are single executables of a few MiB). */
export const MIRRORING_RECEIVER_MAX_BYTES = 256 * 1024 * 1024;
/** A cached Linux player artifact no request used for this long is deleted when another is built. */
export const ARTIFACT_IDLE_MS = 60 * 60_000;

const receiverLocks = new KeyedLocks();

/** This server's URL for players, refusing a Host header that is not a plain host[:port]. */
async function serverUrlOf(ctx: Context): Promise<string> {
  const settings = await getSettings(ctx.deps.db);
  const url = safeServerUrl(effectivePublicUrl(ctx.deps.config.publicUrl, settings, `${ctx.protocol}://${ctx.host}`));
  if (!url) throw new ApiError('validation_failed', 'The request’s Host is not a usable server address; set the public URL (Settings, or PLACARD_PUBLIC_URL)');
  return url;
}

/**
 * Where screens reach this server and the pin of its key (docs/trust.md): with an HTTPS
 * listener, its port on the public URL's host name and the listener's pin; without one, the
 * public URL as it is (an https:// one is then trusted through the system's CAs).
 */
async function scriptTarget(ctx: Context): Promise<ScriptTarget> {
  const base = await serverUrlOf(ctx);
  const https = ctx.deps.https;
  if (!https) return { serverUrl: base, pin: null };
  const url = safeServerUrl(`https://${new URL(base).hostname}${https.port === 443 ? '' : `:${https.port}`}`);
  if (!url) throw new ApiError('validation_failed', 'The public URL’s host is not usable for HTTPS; set the public URL (Settings, or PLACARD_PUBLIC_URL)');
  return { serverUrl: url, pin: https.identity.pin };
}

function sendText(ctx: Context, body: string, type: string, filename?: string): void {
  ctx.status = 200;
  ctx.type = type;
  ctx.set('Cache-Control', 'no-cache');
  ctx.set('ETag', `"${createHash('sha256').update(body).digest('hex')}"`);
  if (filename) ctx.set('Content-Disposition', contentDisposition('inline', filename));
  ctx.length = Buffer.byteLength(body);
  if (ctx.method !== 'HEAD') ctx.body = body;
}

interface Artifact {
  file: string;
  fileName: string;
  sizeBytes: number;
  sha256: string;
}

/** Packs a tar.gz in memory, with fixed times so the same inputs give the same bytes. */
async function packTarGz(entries: { name: string; body: string; mode: number }[]): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  pack.on('data', (c: unknown) => chunks.push(c as Buffer));
  const ended = new Promise<void>((resolve, reject) => {
    pack.on('end', () => resolve());
    pack.on('error', reject);
  });
  const mtime = new Date(Date.UTC(2020, 0, 1));
  for (const e of entries) pack.entry({ name: e.name, mode: e.mode, mtime, uid: 0, gid: 0 }, e.body);
  pack.finalize();
  await ended;
  return gzipSync(Buffer.concat(chunks), { level: 9 });
}

/**
 * The Linux player artifact for a server URL: `placard-player/{install.sh,player.service,README}`
 * as a tar.gz, content-addressed under `<data>/releases/linux-player/` (built once per URL and version).
 */
async function linuxArtifact(dataDir: string, target: ScriptTarget): Promise<Artifact> {
  const serverUrl = target.serverUrl;
  const fileName = `placard-player-${SERVER_VERSION}-linux.tar.gz`;
  const readme = [
    `Placard Linux player ${SERVER_VERSION} for ${serverUrl}`,
    '',
    'On the screen box (Debian 12+, Ubuntu 22.04+, Raspberry Pi OS; x86_64 or aarch64):',
    '',
    `  tar xzf ${fileName}`,
    '  sudo sh placard-player/install.sh',
    '',
    `It installs Chromium and cage, and shows ${serverUrl}/play full screen on tty1.`,
    target.pin
      ? `It reaches the server over HTTPS and accepts only its keys: ${target.pin}`
      : 'It reaches the server over plain HTTP (the server has no HTTPS listener).',
    'player.service is a copy for reading: install.sh downloads the unit from the server and installs it only if its sha256 is',
    `${PLAYER_SERVICE_SHA256}, the one it carries.`,
    '',
  ].join('\n');
  const body = await packTarGz([
    { name: 'placard-player/install.sh', body: playerInstallScript(target), mode: 0o755 },
    { name: 'placard-player/player.service', body: playerServiceUnit(), mode: 0o644 },
    { name: 'placard-player/README', body: readme, mode: 0o644 },
  ]);
  const sha256 = createHash('sha256').update(body).digest('hex');
  const dir = path.join(dataDir, 'releases', 'linux-player');
  const name = `${sha256}.tar.gz`;
  const file = path.join(dir, name);
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    const tmp = `${file}.${process.pid}.${randomBytes(3).toString('hex')}.tmp`;
    writeFileSync(tmp, body);
    renameSync(tmp, file);
    // Keep the directory small without pulling a file from under a request for another URL:
    // only artifacts no request used for ARTIFACT_IDLE_MS go (rebuilt on demand if asked again).
    const now = Date.now();
    for (const old of readdirSync(dir)) {
      if (old === name) continue;
      const mtime = statSync(path.join(dir, old), { throwIfNoEntry: false })?.mtimeMs;
      if (mtime !== undefined && now - mtime > ARTIFACT_IDLE_MS) rmSync(path.join(dir, old), { force: true });
    }
  } else {
    // In use: its time says so to the sweep above.
    const now = new Date();
    try {
      utimesSync(file, now, now);
    } catch {
      // swept between the check and now: the next request builds it again
    }
  }
  return { file, fileName, sizeBytes: body.length, sha256 };
}

const HOW_TO_PROVIDE =
  'An administrator uploads the receiver binary: PUT /api/v1/install/mirroring/receiver with the file as the body (Content-Type: application/octet-stream); ' +
  'these routes then serve it with its sha256.';

/** The uploaded mirroring receiver (the `provisioning.mirroringReceiver` setting), or 404 saying how to provide one. */
async function mirroringReceiver(ctx: Context): Promise<{ file: string; sizeBytes: number; sha256: string; architecture: 'x86_64' | 'aarch64' | null }> {
  const receiver = (await cachedSettings(ctx.deps.db)).provisioning.mirroringReceiver;
  if (!receiver) throw new ApiError('not_found', `No mirroring receiver has been provided. ${HOW_TO_PROVIDE}`);
  const file = path.join(ctx.deps.config.dataDir, MIRRORING_RECEIVER_DIR, receiver.fileName);
  const s = await stat(file).catch(() => null);
  if (!s?.isFile() || s.size !== receiver.sizeBytes) {
    throw new ApiError(
      'not_found',
      `The mirroring receiver file is missing or damaged in the data directory (${MIRRORING_RECEIVER_DIR}/${receiver.fileName}). ${HOW_TO_PROVIDE}`,
    );
  }
  return { file, sizeBytes: s.size, sha256: receiver.sha256, architecture: await architectureOf(file) };
}

/** The CPU an uploaded receiver is built for (its ELF header), null when it is none the installer supports. */
async function architectureOf(file: string): Promise<'x86_64' | 'aarch64' | null> {
  const fh = await open(file, 'r');
  try {
    const head = Buffer.alloc(20);
    const { bytesRead } = await fh.read(head, 0, 20, 0);
    return elfArchitecture(head.subarray(0, bytesRead));
  } finally {
    await fh.close();
  }
}

const ReceiverInfo = z.object({
  fileName: z.string(),
  architecture: z
    .enum(['x86_64', 'aarch64'])
    .nullable()
    .meta({ description: 'The CPU the binary is built for (its ELF header); null: not a 64-bit x86 or ARM Linux program, which the installer refuses' }),
  sha256: z.string(),
  sizeBytes: z.number(),
  uploadedAt: z.string(),
  url: z.string(),
  sha256Url: z.string(),
  installScriptUrl: z.string(),
});

const receiverInfo = (r: MirroringReceiver, architecture: 'x86_64' | 'aarch64' | null) => ({
  fileName: 'placard-mirroring-receiver',
  architecture,
  sha256: r.sha256,
  sizeBytes: r.sizeBytes,
  uploadedAt: r.uploadedAt,
  url: '/api/v1/install/mirroring/receiver',
  sha256Url: '/api/v1/install/mirroring/receiver.sha256',
  installScriptUrl: '/install-mirroring.sh',
});

/** Streams the request body to `<dir>/.upload-<pid>-*.partial`, hashing it; refuses more than `max` bytes. */
async function receiveFile(ctx: Context, dir: string, max: number): Promise<{ tmp: string; sizeBytes: number; sha256: string }> {
  const declared = Number(ctx.get('content-length') || NaN);
  if (declared > max) throw new ApiError('payload_too_large', `The receiver may be at most ${max} bytes; this one is ${declared}`);
  await mkdir(dir, { recursive: true });
  const tmp = path.join(dir, `.upload-${process.pid}-${randomBytes(6).toString('hex')}.partial`);
  const hash = createHash('sha256');
  let size = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > max) return done(new ApiError('payload_too_large', `The receiver may be at most ${max} bytes`));
      hash.update(chunk);
      done(null, chunk);
    },
  });
  try {
    await pipeline(ctx.req, counter, createWriteStream(tmp, { mode: 0o644 }));
  } catch (err) {
    await rm(tmp, { force: true });
    if (err instanceof ApiError) {
      ctx.set('Connection', 'close'); // the rest of the body is not read
      throw err;
    }
    if ((err as NodeJS.ErrnoException).code === 'ENOSPC') throw new ApiError('insufficient_storage', 'The disk is full; the upload was discarded');
    throw new ApiError('validation_failed', `The upload did not complete: ${(err as Error).message}`);
  }
  if (size === 0) {
    await rm(tmp, { force: true });
    throw new ApiError('validation_failed', 'The body is empty: send the receiver binary');
  }
  return { tmp, sizeBytes: size, sha256: hash.digest('hex') };
}

const LinuxInstallInfo = z.object({
  version: z.string(),
  playerFamily: z.literal('desktop-linux'),
  serverUrl: z.string(),
  playerUrl: z.string(),
  installScriptUrl: z.string(),
  installCommand: z
    .string()
    .meta({ description: 'The line to run on a screen box; with HTTPS it pins the server’s keys (curl --pinnedpubkey) and hands the pin to the script' }),
  pin: z.string().nullable().meta({ description: 'curl’s --pinnedpubkey value for the server’s keys (sha256//…;sha256//…); null without HTTPS' }),
  tls: z
    .object({
      source: z.enum(['generated', 'provided']),
      fingerprintSha256: z.string().meta({ description: 'SHA-256 of the certificate, as browsers show it' }),
      spkiSha256: z.array(z.string()).meta({ description: 'base64 SHA-256 of the pinned public keys: the current one, then the next one (generated only)' }),
      notAfter: z.string(),
    })
    .nullable(),
  serviceUrl: z.string(),
  serviceSha256: z.string().meta({ description: 'sha256 of the unit; the installer refuses any other' }),
  architectures: z.array(z.string()),
  distributions: z.array(z.string()),
  artifact: z.object({ url: z.string(), fileName: z.string(), sizeBytes: z.number(), sha256: z.string(), contentType: z.string() }),
});

const artifactRoute = (method: 'GET' | 'HEAD') =>
  defineRoute({
    method,
    path: '/api/v1/install/linux/artifact',
    auth: 'public',
    tags: TAGS,
    summary: 'The Linux player as a tarball (install.sh, player.service, README) for this server, with Range',
    responses: {
      200: { description: 'The tarball', content: { 'application/gzip': {} } },
      206: { description: 'A byte range of it', content: { 'application/gzip': {} } },
      304: { description: 'Not modified (If-None-Match)' },
      400: { description: 'validation_failed: no public URL is set and the request’s Host is not a usable server address' },
      416: { description: 'range_not_satisfiable' },
    },
    handler: async (ctx) => {
      const artifact = await linuxArtifact(ctx.deps.config.dataDir, await scriptTarget(ctx));
      await sendFile(ctx, {
        path: artifact.file,
        contentType: 'application/gzip',
        etag: artifact.sha256,
        disposition: { type: 'attachment', filename: artifact.fileName },
        cacheControl: 'no-cache',
      });
    },
  });

const receiverRoute = (method: 'GET' | 'HEAD') =>
  defineRoute({
    method,
    path: '/api/v1/install/mirroring/receiver',
    auth: 'public',
    tags: TAGS,
    summary: 'The mirroring receiver binary an administrator provided, with Range',
    responses: {
      200: { description: 'The binary', content: { 'application/octet-stream': {} } },
      206: { description: 'A byte range of it', content: { 'application/octet-stream': {} } },
      304: { description: 'Not modified (If-None-Match)' },
      404: { description: 'not_found: no receiver has been provided (the message says where to put it)' },
      416: { description: 'range_not_satisfiable' },
    },
    handler: async (ctx) => {
      const receiver = await mirroringReceiver(ctx);
      await sendFile(ctx, {
        path: receiver.file,
        contentType: 'application/octet-stream',
        etag: receiver.sha256,
        disposition: { type: 'attachment', filename: 'placard-mirroring-receiver' },
        cacheControl: 'no-cache',
      });
    },
  });

export const provisioningRoutes = [
  defineRoute({
    method: 'GET',
    path: '/install.sh',
    auth: 'public',
    tags: TAGS,
    summary: 'The Linux player installer (sh), rendered with this server’s URL and the pin of its HTTPS key',
    description:
      'Run on a screen box with the line `GET /api/v1/install/linux` answers as `installCommand` (the console shows it): with HTTPS, ' +
      '`curl -fsS --pinnedpubkey <pin> -k https://<host>:<port>/install.sh | sudo sh -s -- --pin <pin>`. Installs Chromium and cage, a kiosk user and ' +
      'placard-player.service showing `/play?kiosk=1`; downloads the unit with the key pinned and installs it only if its sha256 is the one the script carries. ' +
      'Options: --pin, --server, --rotate, --screen-blanking, --replace-desktop, --uninstall, --no-start, --root (docs/trust.md).',
    responses: {
      400: { description: 'validation_failed: no public URL is set and the request’s Host is not a usable server address' },
      200: { description: 'A POSIX sh script', content: { 'text/x-shellscript': {} } },
    },
    handler: async (ctx) => sendText(ctx, playerInstallScript(await scriptTarget(ctx)), 'text/x-shellscript; charset=utf-8', 'install.sh'),
  }),
  defineRoute({
    method: 'GET',
    path: '/install/player.service',
    auth: 'public',
    tags: TAGS,
    summary: 'The systemd unit of the Linux player (the same bytes for every server of this version: the installer checks its sha256)',
    responses: {
      200: { description: 'A systemd unit file', content: { 'text/plain': {} } },
    },
    handler: async (ctx) => sendText(ctx, playerServiceUnit(), 'text/plain; charset=utf-8', 'placard-player.service'),
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/install/linux',
    auth: 'public',
    tags: TAGS,
    summary: 'How to install the Linux player here: version, URLs, artifact size and sha256, architectures',
    responses: {
      400: { description: 'validation_failed: no public URL is set and the request’s Host is not a usable server address' },
      200: { description: 'Install metadata', data: LinuxInstallInfo },
    },
    handler: async (ctx) => {
      const target = await scriptTarget(ctx);
      const serverUrl = target.serverUrl;
      const artifact = await linuxArtifact(ctx.deps.config.dataDir, target);
      const identity = ctx.deps.https?.identity;
      return ok({
        version: SERVER_VERSION,
        playerFamily: 'desktop-linux',
        serverUrl,
        playerUrl: `${serverUrl}/play?kiosk=1`,
        installScriptUrl: `${serverUrl}/install.sh`,
        installCommand: installCommand(target),
        pin: target.pin,
        tls: identity
          ? { source: identity.source, fingerprintSha256: identity.fingerprintSha256, spkiSha256: identity.spkiSha256, notAfter: identity.notAfter }
          : null,
        serviceUrl: `${serverUrl}/install/player.service`,
        serviceSha256: PLAYER_SERVICE_SHA256,
        architectures: [...PLAYER_ARCHITECTURES],
        distributions: [
          'Debian 12+',
          'Raspberry Pi OS Lite (bookworm+)',
          'Raspberry Pi OS Desktop (bookworm+, with --replace-desktop)',
          'Ubuntu 22.04+ (with a Chromium or Chrome .deb; the snap is refused)',
        ],
        artifact: {
          url: `${serverUrl}/api/v1/install/linux/artifact`,
          fileName: artifact.fileName,
          sizeBytes: artifact.sizeBytes,
          sha256: artifact.sha256,
          contentType: 'application/gzip',
        },
      });
    },
  }),
  artifactRoute('GET'),
  artifactRoute('HEAD'),
  defineRoute({
    method: 'GET',
    path: '/install-mirroring.sh',
    auth: 'public',
    tags: TAGS,
    summary: 'The mirroring receiver installer (sh); 404 until an administrator provides the receiver',
    responses: {
      400: { description: 'validation_failed: no public URL is set and the request’s Host is not a usable server address' },
      200: { description: 'A POSIX sh script', content: { 'text/x-shellscript': {} } },
      404: { description: 'not_found: no receiver has been provided' },
    },
    handler: async (ctx) => {
      const receiver = await mirroringReceiver(ctx);
      sendText(
        ctx,
        mirroringInstallScript(await scriptTarget(ctx), receiver.sha256, receiver.architecture),
        'text/x-shellscript; charset=utf-8',
        'install-mirroring.sh',
      );
    },
  }),
  receiverRoute('GET'),
  receiverRoute('HEAD'),
  defineRoute({
    method: 'GET',
    path: '/api/v1/install/mirroring/receiver.sha256',
    auth: 'public',
    tags: TAGS,
    summary: 'The receiver’s sha256, in sha256sum format',
    responses: {
      200: { description: '`<hex>  placard-mirroring-receiver`', content: { 'text/plain': {} } },
      404: { description: 'not_found: no receiver has been provided' },
    },
    handler: async (ctx) => {
      const receiver = await mirroringReceiver(ctx);
      sendText(ctx, `${receiver.sha256}  placard-mirroring-receiver\n`, 'text/plain; charset=utf-8');
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/api/v1/install/mirroring/receiver',
    auth: 'session',
    minRole: 'admin',
    extension: true,
    tags: TAGS,
    summary: 'Provide the mirroring receiver binary (the body is the file); it replaces the one before',
    description:
      `Streamed to the data directory with its sha256 computed on the way, at most ${MIRRORING_RECEIVER_MAX_BYTES / 1024 / 1024} MiB; ` +
      'recorded in the `provisioning.mirroringReceiver` setting, which the public receiver routes and /install-mirroring.sh serve from.',
    rawBody: { contentTypes: ['application/octet-stream'] },
    responses: {
      200: { description: 'The receiver now served', data: ReceiverInfo },
      400: { description: 'validation_failed: an empty or interrupted body' },
      413: { description: 'payload_too_large: over the limit' },
      507: { description: 'insufficient_storage: the disk filled up' },
    },
    handler: async (ctx, { auth }) => {
      const dir = path.join(ctx.deps.config.dataDir, MIRRORING_RECEIVER_DIR);
      const got = await receiveFile(ctx, dir, MIRRORING_RECEIVER_MAX_BYTES);
      const fileName = `receiver-${got.sha256}`;
      // One replacement at a time: putting the file in place, recording it and deleting the
      // one before must not interleave with another upload's (which could delete the file
      // the setting ends up naming).
      const release = await receiverLocks.acquire(dir);
      try {
        try {
          durableRename(got.tmp, path.join(dir, fileName));
        } finally {
          await rm(got.tmp, { force: true });
        }
        const before = (await getSettings(ctx.deps.db)).provisioning.mirroringReceiver;
        const receiver: MirroringReceiver = { fileName, sha256: got.sha256, sizeBytes: got.sizeBytes, uploadedAt: new Date().toISOString() };
        await setMirroringReceiver(ctx.deps.db, receiver, (auth as SessionPrincipal).userId);
        if (before && before.fileName !== fileName) await rm(path.join(dir, before.fileName), { force: true });
        return ok(receiverInfo(receiver, await architectureOf(path.join(dir, fileName))));
      } finally {
        release();
      }
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/v1/install/mirroring/receiver',
    auth: 'session',
    minRole: 'admin',
    extension: true,
    tags: TAGS,
    summary: 'Stop serving the mirroring receiver and delete its file',
    responses: { 204: { description: 'Deleted' }, 404: { description: 'not_found: none was provided' } },
    handler: async (ctx, { auth }) => {
      const dir = path.join(ctx.deps.config.dataDir, MIRRORING_RECEIVER_DIR);
      const release = await receiverLocks.acquire(dir);
      try {
        const before = (await getSettings(ctx.deps.db)).provisioning.mirroringReceiver;
        if (!before) throw new ApiError('not_found', 'No mirroring receiver has been provided');
        await setMirroringReceiver(ctx.deps.db, null, (auth as SessionPrincipal).userId);
        await rm(path.join(dir, before.fileName), { force: true });
        return noContent();
      } finally {
        release();
      }
    },
  }),
];
