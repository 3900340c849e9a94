import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Context } from 'koa';
import tar from 'tar-stream';
import { z } from 'zod';
import { ApiError } from '../../platform/http/errors.js';
import { defineRoute, ok } from '../../platform/http/route.js';
import { sendFile } from '../../platform/http/send-file.js';
import { SERVER_VERSION } from '../../version.js';
import { effectivePublicUrl, getSettings } from '../system/settings.js';
import { mirroringInstallScript, playerInstallScript, playerServiceUnit, safeServerUrl } from './scripts.js';

const TAGS = ['Provisioning'];
export const PLAYER_ARCHITECTURES = ['x86_64', 'aarch64'] as const;
/** Where an admin puts the mirroring receiver binary, relative to the data directory. */
export const MIRRORING_RECEIVER_FILE = path.join('releases', 'mirroring', 'receiver');

/** This server's URL for players, refusing a Host header that is not a plain host[:port]. */
async function serverUrlOf(ctx: Context): Promise<string> {
  const settings = await getSettings(ctx.deps.db);
  const url = safeServerUrl(effectivePublicUrl(ctx.deps.config.publicUrl, settings, `${ctx.protocol}://${ctx.host}`));
  if (!url) throw new ApiError('validation_failed', 'The request’s Host is not a usable server address; set the public URL (Settings, or PLACARD_PUBLIC_URL)');
  return url;
}

function sendText(ctx: Context, body: string, type: string, filename?: string): void {
  ctx.status = 200;
  ctx.type = type;
  ctx.set('Cache-Control', 'no-cache');
  ctx.set('ETag', `"${createHash('sha256').update(body).digest('hex')}"`);
  if (filename) ctx.set('Content-Disposition', `inline; filename="${filename}"`);
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
async function linuxArtifact(dataDir: string, serverUrl: string): Promise<Artifact> {
  const fileName = `placard-player-${SERVER_VERSION}-linux.tar.gz`;
  const readme = [
    `Placard Linux player ${SERVER_VERSION} for ${serverUrl}`,
    '',
    'On the screen box (Debian 12+, Ubuntu 22.04+, Raspberry Pi OS; x86_64 or aarch64):',
    '',
    '  tar xzf ' + fileName,
    '  sudo sh placard-player/install.sh',
    '',
    `It installs Chromium and cage, and shows ${serverUrl}/play full screen on tty1.`,
    '',
  ].join('\n');
  const body = await packTarGz([
    { name: 'placard-player/install.sh', body: playerInstallScript(serverUrl), mode: 0o755 },
    { name: 'placard-player/player.service', body: playerServiceUnit(serverUrl), mode: 0o644 },
    { name: 'placard-player/README', body: readme, mode: 0o644 },
  ]);
  const sha256 = createHash('sha256').update(body).digest('hex');
  const dir = path.join(dataDir, 'releases', 'linux-player');
  const file = path.join(dir, `${sha256}.tar.gz`);
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    // Keep the directory small: artifacts of other URLs or versions are rebuilt on demand.
    for (const old of readdirSync(dir)) rmSync(path.join(dir, old), { force: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, body);
    renameSync(tmp, file);
  }
  return { file, fileName, sizeBytes: body.length, sha256 };
}

const receiverHashes = new Map<string, { key: string; sha256: string }>();

/** The admin-provided mirroring receiver, or 404 saying how to provide one. */
async function mirroringReceiver(dataDir: string): Promise<{ file: string; sizeBytes: number; sha256: string }> {
  const file = path.join(dataDir, MIRRORING_RECEIVER_FILE);
  let s;
  try {
    s = statSync(file);
  } catch {
    s = null;
  }
  if (!s?.isFile()) {
    throw new ApiError(
      'not_found',
      `No mirroring receiver has been provided. An administrator copies the receiver binary to <data directory>/${MIRRORING_RECEIVER_FILE} on the server ` +
        '(readable by the placard user); this route then serves it with its sha256.',
    );
  }
  const key = `${s.size}:${s.mtimeMs}`;
  let cached = receiverHashes.get(file);
  if (cached?.key !== key) {
    const hash = createHash('sha256');
    await new Promise<void>((resolve, reject) => {
      createReadStream(file)
        .on('data', (c) => hash.update(c))
        .on('end', () => resolve())
        .on('error', reject);
    });
    cached = { key, sha256: hash.digest('hex') };
    receiverHashes.set(file, cached);
  }
  return { file, sizeBytes: s.size, sha256: cached.sha256 };
}

const LinuxInstallInfo = z.object({
  version: z.string(),
  playerFamily: z.literal('desktop-linux'),
  serverUrl: z.string(),
  playerUrl: z.string(),
  installScriptUrl: z.string(),
  installCommand: z.string(),
  serviceUrl: z.string(),
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
      206: { description: 'A byte range of it' },
      304: { description: 'Not modified (If-None-Match)' },
      416: { description: 'range_not_satisfiable' },
    },
    handler: async (ctx) => {
      const artifact = await linuxArtifact(ctx.deps.config.dataDir, await serverUrlOf(ctx));
      await sendFile(ctx, { path: artifact.file, contentType: 'application/gzip', etag: artifact.sha256, disposition: { type: 'attachment', filename: artifact.fileName }, cacheControl: 'no-cache' });
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
      206: { description: 'A byte range of it' },
      404: { description: 'not_found: no receiver has been provided (the message says where to put it)' },
      416: { description: 'range_not_satisfiable' },
    },
    handler: async (ctx) => {
      const receiver = await mirroringReceiver(ctx.deps.config.dataDir);
      await sendFile(ctx, { path: receiver.file, contentType: 'application/octet-stream', etag: receiver.sha256, disposition: { type: 'attachment', filename: 'placard-mirroring-receiver' }, cacheControl: 'no-cache' });
    },
  });

export const provisioningRoutes = [
  defineRoute({
    method: 'GET',
    path: '/install.sh',
    auth: 'public',
    tags: TAGS,
    summary: 'The Linux player installer (sh), rendered with this server’s public URL',
    description: 'Run on a screen box: `curl -fsSL <server>/install.sh | sudo sh`. Installs Chromium and cage, a kiosk user and placard-player.service showing `/play?kiosk=1`.',
    responses: { 200: { description: 'A POSIX sh script', content: { 'text/x-shellscript': {} } } },
    handler: async (ctx) => sendText(ctx, playerInstallScript(await serverUrlOf(ctx)), 'text/x-shellscript; charset=utf-8', 'install.sh'),
  }),
  defineRoute({
    method: 'GET',
    path: '/install/player.service',
    auth: 'public',
    tags: TAGS,
    summary: 'The systemd unit of the Linux player',
    responses: { 200: { description: 'A systemd unit file', content: { 'text/plain': {} } } },
    handler: async (ctx) => sendText(ctx, playerServiceUnit(await serverUrlOf(ctx)), 'text/plain; charset=utf-8', 'placard-player.service'),
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/install/linux',
    auth: 'public',
    tags: TAGS,
    summary: 'How to install the Linux player here: version, URLs, artifact size and sha256, architectures',
    responses: { 200: { description: 'Install metadata', data: LinuxInstallInfo } },
    handler: async (ctx) => {
      const serverUrl = await serverUrlOf(ctx);
      const artifact = await linuxArtifact(ctx.deps.config.dataDir, serverUrl);
      return ok({
        version: SERVER_VERSION,
        playerFamily: 'desktop-linux',
        serverUrl,
        playerUrl: `${serverUrl}/play?kiosk=1`,
        installScriptUrl: `${serverUrl}/install.sh`,
        installCommand: `curl -fsSL ${serverUrl}/install.sh | sudo sh`,
        serviceUrl: `${serverUrl}/install/player.service`,
        architectures: [...PLAYER_ARCHITECTURES],
        distributions: ['Debian 12+', 'Ubuntu 22.04+', 'Raspberry Pi OS (bookworm+)'],
        artifact: { url: `${serverUrl}/api/v1/install/linux/artifact`, fileName: artifact.fileName, sizeBytes: artifact.sizeBytes, sha256: artifact.sha256, contentType: 'application/gzip' },
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
      200: { description: 'A POSIX sh script', content: { 'text/x-shellscript': {} } },
      404: { description: 'not_found: no receiver has been provided' },
    },
    handler: async (ctx) => {
      const receiver = await mirroringReceiver(ctx.deps.config.dataDir);
      sendText(ctx, mirroringInstallScript(await serverUrlOf(ctx), receiver.sha256), 'text/x-shellscript; charset=utf-8', 'install-mirroring.sh');
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
    responses: { 200: { description: '`<hex>  placard-mirroring-receiver`', content: { 'text/plain': {} } }, 404: { description: 'not_found: no receiver has been provided' } },
    handler: async (ctx) => {
      const receiver = await mirroringReceiver(ctx.deps.config.dataDir);
      sendText(ctx, `${receiver.sha256}  placard-mirroring-receiver\n`, 'text/plain; charset=utf-8');
    },
  }),
];
