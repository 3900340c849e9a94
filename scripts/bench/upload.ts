/**
 * Upload benchmark: tus upload throughput of a large file (default 1 GiB) over loopback
 * against writing the same bytes to disk with `dd` (conv=fsync) in the same run, the
 * server's resident memory while it receives the file (it must stay flat: the body
 * streams to disk), and the time `complete` takes (hash, store, commit). The source is a
 * seeded, non-repeating stream (AES-256-CTR keystream) behind an MP4 header, so the
 * server accepts it as video; the whole stored file is hashed and compared with the
 * source. The server runs in its own process so its RSS is its own.
 *   npx tsx scripts/bench/upload.ts [-- --mb 1024 --seed 1]
 * Figures depend on the machine and its load: compare the ratio, not absolute numbers.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createCipheriv, createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};

/** Child mode: a real server over a temp data dir, with an owner signed in. */
async function serve(): Promise<void> {
  const { buildApp } = await import('../../server/src/app.js');
  const { testConfig } = await import('../../server/src/config.js');
  const { migrate, openDatabase } = await import('../../server/src/platform/db/database.js');
  const { createLogger } = await import('../../server/src/platform/log.js');
  const { newAppDeps } = await import('../../server/src/platform/app-deps.js');
  const { listen } = await import('../../server/src/server.js');
  const dir = process.argv[process.argv.indexOf('--serve') + 1]!;
  const config = testConfig(dir, { validateResponses: false, uploadMaxBytes: 64 * 1024 ** 3 });
  const database = openDatabase(path.join(dir, 'placard.db'));
  await migrate(database.db);
  const logger = createLogger('silent');
  const app = buildApp(
    newAppDeps({
      config,
      db: database.db,
      logger,
    }),
  );
  const server = await listen(app, '127.0.0.1', 0);
  const res = await fetch(`${server.url}/api/v1/auth/setup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'bench@example.test', password: 'correct horse battery staple', displayName: 'Bench' }),
  });
  const body = (await res.json()) as { data: { csrfToken: string } };
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  process.stdout.write(`${JSON.stringify({ url: server.url, cookie, csrf: body.data.csrfToken })}\n`);
}

function rssOf(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024;
}

async function upload(target: { url: string; cookie: string; csrf: string }, file: string, size: number): Promise<string> {
  const headers = { cookie: target.cookie, 'x-csrf-token': target.csrf, 'tus-resumable': '1.0.0' };
  const meta = `filename ${Buffer.from('bench.mp4').toString('base64')}`;
  const created = await fetch(`${target.url}/api/v1/uploads`, {
    method: 'POST',
    headers: { ...headers, 'upload-length': String(size), 'upload-metadata': meta },
  });
  if (created.status !== 201) throw new Error(`creation: ${created.status} ${await created.text()}`);
  const location = created.headers.get('location')!;
  await new Promise<void>((resolve, reject) => {
    const u = new URL(location, target.url);
    const req = http.request(
      u,
      { method: 'PATCH', headers: { ...headers, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream', 'content-length': String(size) } },
      (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 204 ? resolve() : reject(new Error(`PATCH answered ${res.statusCode}`))));
      },
    );
    req.on('error', reject);
    fs.createReadStream(file, { highWaterMark: 1024 * 1024 }).pipe(req);
  });
  return location.split('/').pop()!;
}

async function complete(target: { url: string; cookie: string; csrf: string }, id: string): Promise<{ sha256: string; sizeBytes: number }> {
  const res = await fetch(`${target.url}/api/v1/uploads/${id}/complete`, {
    method: 'POST',
    headers: { cookie: target.cookie, 'x-csrf-token': target.csrf, 'content-type': 'application/json' },
    body: '{}',
  });
  if (res.status !== 201) throw new Error(`complete: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { data: { sha256: string; sizeBytes: number } }).data;
}

/** SHA-256 of a file, streamed. */
async function hashOf(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of fs.createReadStream(file, { highWaterMark: 1024 * 1024 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * Writes `mb` MiB: an MP4 `ftyp` box and the header of one `mdat` box (64-bit size) that
 * holds the rest, filled with an AES-256-CTR keystream keyed by the seed: deterministic,
 * incompressible and never repeating. Answers the sha256 of what was written.
 */
function writeSource(file: string, mb: number, seed: string): string {
  const size = mb * 1024 * 1024;
  const ftyp = Buffer.concat([Buffer.from([0, 0, 0, 24]), Buffer.from('ftypisom'), Buffer.from([0, 0, 2, 0]), Buffer.from('isommp41')]);
  const mdat = Buffer.alloc(16);
  mdat.writeUInt32BE(1, 0);
  mdat.write('mdat', 4, 'latin1');
  mdat.writeBigUInt64BE(BigInt(size - ftyp.length), 8);
  const key = createHash('sha256').update(`placard upload bench ${seed}`).digest();
  const cipher = createCipheriv('aes-256-ctr', key, Buffer.alloc(16));
  const zeros = Buffer.alloc(1024 * 1024);
  const hash = createHash('sha256');
  const fd = fs.openSync(file, 'w');
  let written = 0;
  const put = (b: Buffer) => {
    fs.writeSync(fd, b);
    hash.update(b);
    written += b.length;
  };
  put(Buffer.concat([ftyp, mdat]));
  while (written < size) {
    const block = cipher.update(zeros.subarray(0, Math.min(zeros.length, size - written)));
    put(block);
  }
  fs.closeSync(fd);
  return hash.digest('hex');
}

async function main(): Promise<void> {
  if (process.argv.includes('--serve')) return serve();
  const mb = arg('mb', 1024);
  const seed = String(arg('seed', 1));
  const size = mb * 1024 * 1024;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'placard-bench-upload-'));
  const dataDir = path.join(work, 'data');
  fs.mkdirSync(dataDir);
  let child: ReturnType<typeof spawn> | null = null;
  try {
    const file = path.join(work, 'source.bin');
    const sourceSha = writeSource(file, mb, seed);

    // Baseline: dd writes the same bytes to the same disk, fsynced.
    const ddStart = process.hrtime.bigint();
    execFileSync('dd', [`if=${file}`, `of=${path.join(work, 'copy.bin')}`, 'bs=1M', 'conv=fsync'], { stdio: 'ignore' });
    const ddSec = Number(process.hrtime.bigint() - ddStart) / 1e9;
    fs.rmSync(path.join(work, 'copy.bin'));

    const self = fileURLToPath(import.meta.url);
    const server = spawn(process.execPath, ['--import', 'tsx', self, '--serve', dataDir], { stdio: ['ignore', 'pipe', 'inherit'] });
    child = server;
    const target = await new Promise<{ url: string; cookie: string; csrf: string }>((resolve, reject) => {
      let buf = '';
      server.stdout!.on('data', (d: Buffer) => {
        buf += d.toString();
        const line = buf.split('\n')[0];
        if (buf.includes('\n') && line) resolve(JSON.parse(line));
      });
      server.on('exit', (code) => reject(new Error(`server exited ${code}`)));
    });
    await new Promise((r) => setTimeout(r, 500));
    const baseline = rssOf(server.pid!);
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, rssOf(server.pid!))), 50);
    const upStart = process.hrtime.bigint();
    const id = await upload(target, file, size);
    const upSec = Number(process.hrtime.bigint() - upStart) / 1e9;
    const peakUpload = peak;
    const doneStart = process.hrtime.bigint();
    const asset = await complete(target, id);
    const completeSec = Number(process.hrtime.bigint() - doneStart) / 1e9;
    clearInterval(sampler);
    server.kill('SIGTERM');

    const stored = path.join(dataDir, 'media', asset.sha256.slice(0, 2), asset.sha256.slice(2, 4), asset.sha256);
    const storedSha = await hashOf(stored);
    const intact = storedSha === sourceSha && asset.sha256 === sourceSha && fs.statSync(stored).size === size && asset.sizeBytes === size;

    const MiB = 1024 * 1024;
    const rows = [
      ['dd bs=1M conv=fsync', `${(mb / ddSec).toFixed(0)} MiB/s`, `${ddSec.toFixed(2)} s`],
      ['tus PATCH over loopback', `${(mb / upSec).toFixed(0)} MiB/s`, `${upSec.toFixed(2)} s`],
      ['complete (hash, store, commit)', `${(mb / completeSec).toFixed(0)} MiB/s`, `${completeSec.toFixed(2)} s`],
    ];
    console.log(`\nUpload of ${mb} MiB (${os.cpus().length} CPUs, source seed ${seed})\n`);
    for (const r of rows) console.log(`  ${r[0]!.padEnd(32)} ${r[1]!.padStart(10)} ${r[2]!.padStart(9)}`);
    console.log(`\n  throughput ratio tus/dd: ${(ddSec / upSec).toFixed(2)}`);
    console.log(
      `  server RSS: baseline ${(baseline / MiB).toFixed(0)} MiB, peak ${(peakUpload / MiB).toFixed(0)} MiB while receiving (growth ${((peakUpload - baseline) / MiB).toFixed(0)} MiB), ${(peak / MiB).toFixed(0)} MiB through complete`,
    );
    console.log(`  source sha256 ${sourceSha}`);
    console.log(`  stored sha256 ${storedSha} (asset says ${asset.sha256})`);
    console.log(`  stored file complete and intact: ${intact ? 'yes' : 'NO'}`);
    if (!intact) process.exitCode = 1;
  } finally {
    child?.kill('SIGTERM');
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
