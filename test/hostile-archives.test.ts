import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip, gzipSync } from 'node:zlib';
import tar from 'tar-stream';
import t, { type Test } from 'tap';
import { addEntry } from '../server/src/modules/system/backup-create.js';
import { BACKUP_FORMAT, BACKUP_FORMAT_VERSION, knownSchemaVersion } from '../server/src/modules/system/backup-format.js';
import { ROUTES } from '../server/src/routes.js';
import { cookieHeader } from './helpers/auth.js';
import { tempDataDir } from './helpers/harness.js';
import { startServerProcess, type ServerProcess } from './helpers/server-process.js';

// Every route that takes an archive or an upload, fed malformed, truncated and hostile
// archives in the real server process (issue 15: a non-Placard tar killed the server).
// Each must answer a documented 4xx in the envelope, leave nothing outside the data
// directory and no partial state, log no fault, and leave the process alive and ready.

// ---------------------------------------------------------------- archives made here

interface EntrySpec {
  name: string;
  type?: tar.Header['type'];
  body?: Buffer | string;
  linkname?: string;
}

/** A tar made by tar-stream's pack. */
async function packTar(entries: EntrySpec[]): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  pack.on('data', (c: unknown) => chunks.push(c as Buffer));
  const ended = new Promise<void>((resolve, reject) => {
    pack.on('end', resolve);
    pack.on('error', reject);
  });
  for (const e of entries) {
    const header: Partial<tar.Header> & { name: string } = { name: e.name, type: e.type ?? 'file', mode: 0o644, mtime: new Date(0) };
    if (e.linkname !== undefined) header.linkname = e.linkname;
    if (e.type === 'character-device' || e.type === 'block-device') Object.assign(header, { devmajor: 1, devminor: 3 });
    if (header.type === 'file') pack.entry(header, e.body ?? '');
    else pack.entry(header).end(undefined);
  }
  pack.finalize();
  await ended;
  return Buffer.concat(chunks);
}

/** One 512-byte ustar header made by hand (for what tar-stream's pack will not write). */
function rawHeader(name: string, size: number | string, typeflag: string, options: { badChecksum?: boolean } = {}): Buffer {
  const h = Buffer.alloc(512);
  h.write(name.slice(0, 100), 0, 'utf8');
  h.write('0000644\0', 100);
  h.write('0000000\0', 108);
  h.write('0000000\0', 116);
  h.write(typeof size === 'number' ? `${size.toString(8).padStart(11, '0')}\0` : size, 124);
  h.write('00000000000\0', 136);
  h.write('        ', 148); // checksum placeholder
  h.write(typeflag, 156);
  h.write('ustar\0', 257);
  h.write('00', 263);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${(options.badChecksum ? sum + 1 : sum).toString(8).padStart(6, '0')}\0 `, 148);
  return h;
}

const pad = (b: Buffer) => Buffer.concat([b, Buffer.alloc((512 - (b.length % 512)) % 512)]);
const END = Buffer.alloc(1024);

/** One pax record, `<length> <key>=<value>\n`, its length counting itself. */
function paxRecord(key: string, value: string): Buffer {
  const rest = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(rest) + 1;
  while (String(length).length + Buffer.byteLength(rest) !== length) length = String(length).length + Buffer.byteLength(rest);
  return Buffer.from(`${length}${rest}`);
}

/** A file entry behind a hand-made pax header (tar-stream's pack takes minutes for a 1 MiB path). */
function paxFile(records: Buffer, name: string, body: string): Buffer {
  return Buffer.concat([rawHeader('PaxHeader', records.length, 'x'), pad(records), rawHeader(name, body.length, '0'), pad(Buffer.from(body))]);
}

/** A backup header this server reads, so the entries after it are what gets judged. */
const headerEntry = (): EntrySpec => ({
  name: 'placard-backup.json',
  body: JSON.stringify({
    format: BACKUP_FORMAT,
    formatVersion: BACKUP_FORMAT_VERSION,
    serverVersion: 'test',
    schemaVersion: knownSchemaVersion(),
    instanceId: null,
    createdAt: new Date().toISOString(),
    kind: 'manual',
    includesMedia: true,
  }),
});

/** A gzip of `bytes` zero bytes, made as a stream (a bomb: ~1000:1). */
async function gzipOfZeros(bytes: number, file: string): Promise<void> {
  const chunk = Buffer.alloc(4 * 1024 * 1024);
  async function* zeros() {
    for (let left = bytes; left > 0; left -= chunk.length) yield left >= chunk.length ? chunk : chunk.subarray(0, left);
  }
  await pipeline(Readable.from(zeros()), createGzip({ level: 1 }), createWriteStream(file));
}

/** Names traversal entries aim at: none of them may exist after the run. */
const EVIL = `placard-evil-${randomBytes(4).toString('hex')}`;

interface Hostile {
  name: string;
  bytes: Buffer;
  /** Sent with this Content-Encoding (the raw-body routes refuse any). */
  encoding?: string;
  /** The status the backup upload must answer (400 unless said). */
  status?: number;
  /** Why the backup upload must refuse it (its message). */
  why?: RegExp;
}

async function hostileArchives(work: string, realBackup: Buffer): Promise<Hostile[]> {
  const hello = await packTar([{ name: 'hello.txt', body: 'hello' }]);
  const bombFile = path.join(work, 'bomb.gz');
  await gzipOfZeros(256 * 1024 * 1024, bombFile);
  const bomb = await new Promise<Buffer>((resolve, reject) => {
    const parts: Buffer[] = [];
    createReadStream(bombFile)
      .on('data', (c) => parts.push(c as Buffer))
      .on('end', () => resolve(Buffer.concat(parts)))
      .on('error', reject);
  });
  const withHeader = (entries: EntrySpec[]) => packTar([headerEntry(), ...entries]);
  // The header entry without the end blocks, to append hand-made entries to.
  const headerOnly = (await packTar([headerEntry()])).subarray(0, -1024);
  const list: Hostile[] = [
    { name: 'zero bytes', why: /no header/, bytes: Buffer.alloc(0) },
    { name: 'random bytes', why: /damaged or cut short/, bytes: randomBytes(64 * 1024) },
    { name: 'a tar that is not a Placard backup (a text file first)', why: /not a Placard backup/, bytes: hello },
    { name: 'a directory entry first', why: /not a Placard backup/, bytes: await packTar([{ name: 'media/', type: 'directory' }, headerEntry()]) },
    {
      name: 'a symlink entry first',
      why: /holds a symlink entry/,
      bytes: await packTar([{ name: 'placard-backup.json', type: 'symlink', linkname: '/etc/passwd' }]),
    },
    { name: 'traversal: ../', why: /unexpected entry/, bytes: await withHeader([{ name: `../${EVIL}`, body: 'x' }]) },
    { name: 'traversal: ../../ deeper', why: /unexpected entry/, bytes: await withHeader([{ name: `media/../../../${EVIL}`, body: 'x' }]) },
    { name: 'traversal: an absolute path', why: /unexpected entry/, bytes: await withHeader([{ name: path.join(os.tmpdir(), EVIL), body: 'x' }]) },
    { name: 'traversal: a backslash path', why: /unexpected entry/, bytes: await withHeader([{ name: `media\\..\\..\\${EVIL}`, body: 'x' }]) },
    { name: 'a symlink entry', why: /holds a symlink entry/, bytes: await withHeader([{ name: 'media/aa/link', type: 'symlink', linkname: '/etc/passwd' }]) },
    { name: 'a hardlink entry', why: /holds a link entry/, bytes: await withHeader([{ name: 'media/aa/hard', type: 'link', linkname: 'placard.db' }]) },
    { name: 'a character device entry', why: /holds a character-device entry/, bytes: await withHeader([{ name: 'media/aa/null', type: 'character-device' }]) },
    { name: 'a block device entry', why: /holds a block-device entry/, bytes: await withHeader([{ name: 'media/aa/disk', type: 'block-device' }]) },
    { name: 'a fifo entry', why: /holds a fifo entry/, bytes: await withHeader([{ name: 'media/aa/pipe', type: 'fifo' }]) },
    { name: 'a directory entry after the header', why: /holds a directory entry/, bytes: await withHeader([{ name: 'media/aa/', type: 'directory' }]) },
    {
      name: 'a file where another entry needs a directory',
      why: /to be a directory/,
      bytes: await withHeader([
        { name: 'media/aa', body: 'file' },
        { name: 'media/aa/bb', body: 'file below it' },
      ]),
    },
    { name: 'a path segment of 300 bytes (pax)', why: /unexpected entry/, bytes: await withHeader([{ name: `media/${'a'.repeat(300)}`, body: 'x' }]) },
    {
      name: 'a path of 1 MiB (pax)',
      why: /unexpected entry/,
      bytes: Buffer.concat([headerOnly, paxFile(paxRecord('path', `media/${'a/'.repeat(512 * 1024)}x`), 'x', 'x'), END]),
    },
    { name: 'a pax size that is not a number', bytes: Buffer.concat([headerOnly, paxFile(paxRecord('size', 'lots'), 'media/aa/x', 'x'), END]) },
    { name: 'a control character in a name', why: /unexpected entry/, bytes: await withHeader([{ name: 'media/a\u0007b', body: 'x' }]) },
    {
      name: 'a pax header of 5 MiB',
      why: /Header exceeds max size/,
      bytes: Buffer.concat([headerOnly, paxFile(paxRecord('comment', 'c'.repeat(5 * 1024 * 1024)), 'media/aa/x', 'x'), END]),
    },
    {
      name: 'a pax header of 3 MiB naming a 3 MiB path',
      why: /unexpected entry/,
      bytes: Buffer.concat([headerOnly, paxFile(paxRecord('path', `media/${'b'.repeat(3 * 1024 * 1024)}`), 'x', 'x'), END]),
    },
    {
      name: 'a GNU long name of 5 MiB',
      why: /Header exceeds max size/,
      bytes: Buffer.concat([
        rawHeader('././@LongLink', 5 * 1024 * 1024, 'L'),
        pad(Buffer.alloc(5 * 1024 * 1024, 'a')),
        rawHeader('x', 1, '0'),
        pad(Buffer.from('x')),
        END,
      ]),
    },
    {
      name: 'a header with a bad checksum',
      bytes: Buffer.concat([rawHeader('placard-backup.json', 10, '0', { badChecksum: true }), pad(Buffer.from('{}')), END]),
    },
    {
      name: 'a header that announces 8 GiB and ends',
      why: /too large/,
      bytes: Buffer.concat([rawHeader('placard-backup.json', 8 * 1024 ** 3 - 1, '0'), Buffer.alloc(4096)]),
    },
    { name: 'a size field of garbage', bytes: Buffer.concat([rawHeader('placard-backup.json', 'zzzzzzzzzzz\0', '0'), END]) },
    { name: 'a header entry that is not JSON', bytes: await packTar([{ name: 'placard-backup.json', body: '{ not json' }]) },
    { name: 'the header entry twice', why: /appears twice/, bytes: await packTar([headerEntry(), headerEntry()]) },
    { name: 'no manifest at the end', why: /no manifest/, bytes: await withHeader([{ name: 'placard.db', body: 'SQLite format 3\0' }]) },
    { name: 'a real backup cut short', why: /cut short/, bytes: realBackup.subarray(0, Math.floor(realBackup.length / 2)) },
    { name: 'a real backup cut inside its first header', bytes: realBackup.subarray(0, 300) },
    { name: 'a real backup without its end blocks, cut mid-entry', bytes: realBackup.subarray(0, realBackup.length - 1024 - 100) },
    { name: 'a real backup gzipped (.tar.gz)', bytes: gzipSync(realBackup) },
    { name: 'a truncated gzip', bytes: gzipSync(realBackup).subarray(0, 2000) },
    { name: 'a gzip bomb (256 MiB of zeros)', why: /damaged/, bytes: bomb },
    { name: 'a gzip bomb sent as Content-Encoding: gzip', why: /Content-Encoding gzip/, bytes: bomb, encoding: 'gzip', status: 415 },
    { name: 'a real backup sent as Content-Encoding: gzip', bytes: gzipSync(realBackup), encoding: 'gzip', status: 415 },
    { name: 'age-encrypted junk', bytes: Buffer.concat([Buffer.from('age-encryption.org/v1\n'), randomBytes(4096)]) },
  ];
  return list;
}

// ---------------------------------------------------------------- the server and its document

interface Session {
  cookie: string;
  csrf: string;
}

interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

async function call(
  server: ServerProcess,
  session: Session | null,
  method: string,
  p: string,
  init: { json?: unknown; body?: Buffer | string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...(session ? { cookie: session.cookie, 'x-csrf-token': session.csrf } : {}), ...init.headers };
  let body: RequestInit['body'];
  if (init.json !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = JSON.stringify(init.json);
  } else if (init.body !== undefined) {
    body = init.body as RequestInit['body'];
  }
  const res = await fetch(server.url + p, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // not JSON
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/** The statuses the served OpenAPI document lists for an operation. */
function documentedStatuses(doc: any, method: string, p: string): number[] {
  const op = doc.paths?.[p]?.[method.toLowerCase()];
  if (!op) throw new Error(`${method} ${p} is not in the OpenAPI document`);
  return Object.keys(op.responses).map(Number);
}

/** Everything under `dir`, relative, with sizes (dot-files included). */
function tree(dir: string): Map<string, number> {
  const out = new Map<string, number>();
  const walk = (d: string, prefix: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const rel = prefix ? `${prefix}/${e.name}` : e.name;
      if (e.isDirectory()) walk(path.join(d, e.name), rel);
      else out.set(rel, 0);
    }
  };
  walk(dir, '');
  return out;
}

// ---------------------------------------------------------------- the test

t.test('hostile archives and uploads: documented 4xx, nothing written outside, no partial state, the process alive and ready', async (t) => {
  const dataDir = tempDataDir(t);
  const work = tempDataDir(t);
  const server = await startServerProcess(t, dataDir, { PLACARD_VALIDATE_RESPONSES: 'true' });
  t.teardown(() => {
    if (!t.passing()) console.error(`the server's last output:\n${server.output().slice(-6000)}`);
  });
  const setup = await call(server, null, 'POST', '/api/v1/auth/setup', {
    json: { email: 'owner@example.test', password: 'correct horse battery staple', displayName: 'Owner' },
  });
  t.equal(setup.status, 201);
  const owner: Session = { cookie: cookieHeader(setup), csrf: setup.body.data.csrfToken };
  const doc = (await call(server, null, 'GET', '/api/v1/openapi.json')).body;
  const marker = await call(server, owner, 'POST', '/api/v1/content-folders', { json: { name: 'Marker' } });
  t.equal(marker.status, 201, 'a marker in the live database');

  // A real backup, to cut and wrap.
  const made = await call(server, owner, 'POST', '/api/v1/system/maintenance/backup', { json: { wait: true, options: { includeMedia: true } } });
  t.equal(made.body.data.state, 'succeeded', JSON.stringify(made.body));
  const realName: string = made.body.data.result.backup.name;
  const download = await fetch(`${server.url}/api/v1/system/backups/${realName}`, { headers: { cookie: owner.cookie } });
  const realBackup = Buffer.from(await download.arrayBuffer());
  t.ok(realBackup.length > 1024, 'the real backup downloaded');

  const hostile = await hostileArchives(work, realBackup);
  const dataBefore = tree(dataDir);
  const parentBefore = new Set(readdirSync(path.dirname(dataDir)));
  const checked = new Set<string>();
  /** Files of the uploads accepted on purpose (a gzipped tar is a Linux release). */
  const acceptedReleases: string[] = [];
  const expectDocumented = (t: Test, method: string, docPath: string, res: Answer, statuses: number[]) => {
    checked.add(`${method} ${docPath}`);
    t.ok(statuses.includes(res.status), `${res.status} is one of ${statuses.join('/')}: ${JSON.stringify(res.body).slice(0, 300)}`);
    t.ok(documentedStatuses(doc, method, docPath).includes(res.status), `${method} ${docPath} documents ${res.status}`);
    if (res.status >= 400) {
      t.type(res.body?.error?.code, 'string', 'the error envelope');
      t.type(res.body?.error?.message, 'string');
    }
  };

  await t.test('POST /api/v1/system/backups (owner upload)', async (t) => {
    for (const h of hostile) {
      const res = await call(server, owner, 'POST', '/api/v1/system/backups', {
        body: h.bytes,
        headers: { 'content-type': 'application/x-tar', ...(h.encoding ? { 'content-encoding': h.encoding } : {}) },
      });
      expectDocumented(t, 'POST', '/api/v1/system/backups', res, [h.status ?? 400]);
      t.equal(res.body?.error?.code, (h.status ?? 400) === 415 ? 'unsupported_media_type' : 'validation_failed', `${h.name}: ${res.body?.error?.message}`);
      if (h.why) t.match(res.body?.error?.message, h.why, `refused for the right reason: ${h.name}`);
    }
    const listed = await call(server, owner, 'GET', '/api/v1/system/backups');
    t.same(
      listed.body.data.items.map((b: { name: string }) => b.name),
      [realName],
      'no hostile upload was kept',
    );
    t.same(
      readdirSync(path.join(dataDir, 'backups')).filter((n) => n !== realName),
      [],
      'and no partial file is left in backups/',
    );
  });

  await t.test('POST /api/v1/system/maintenance/restore of hostile backups placed in backups/', async (t) => {
    // Only archives with a readable header are listed (and so restorable): their hostile
    // entries come after it, and restore extracts them into its staging directory.
    const restorable = hostile.filter((h) => !h.encoding && h.bytes.subarray(0, 19).toString() === 'placard-backup.json');
    t.ok(restorable.length >= 15, `${restorable.length} hostile archives with a valid header first`);
    let i = 0;
    let verified = 0;
    for (const h of restorable) {
      const name = `placard-backup-20200101T00000${String(i++).padStart(4, '0')}Z-uploaded.tar`;
      const file = path.join(dataDir, 'backups', name);
      writeFileSync(file, h.bytes);
      const res = await call(server, owner, 'POST', '/api/v1/system/maintenance/restore', { json: { wait: true, options: { backup: name } } });
      expectDocumented(t, 'POST', '/api/v1/system/maintenance/{action}', res, [200]);
      const run = res.body?.data;
      t.equal(run?.state, 'failed', `${h.name}: ${run?.error?.message ?? JSON.stringify(run)}`);
      t.match(run?.error?.code, /^(validation_failed|not_found)$/, 'refused as bad input, not internal');
      // not_found: its header does not read (so it is not listed); the others were verified and extracted.
      if (run?.error?.code === 'validation_failed') {
        verified++;
        if (h.why) t.match(run.error.message, h.why, `refused for the right reason: ${h.name}`);
      }
      rmSync(file);
    }
    t.ok(verified >= 15, `${verified} reached verification and extraction`);
    t.same(
      readdirSync(dataDir).filter((n) => n.startsWith('.restore-staging-') || n === 'restore-journal.json'),
      [],
      'no staging directory or journal left',
    );
    const folders = await call(server, owner, 'GET', '/api/v1/content-folders');
    t.same(
      folders.body.data.items.map((f: { name: string }) => f.name),
      ['Marker'],
      'the live database is the one from before',
    );
  });

  await t.test('tus uploads and complete: archives are not media', async (t) => {
    const tus = { 'tus-resumable': '1.0.0' };
    for (const h of hostile) {
      if (h.bytes.length === 0) {
        const res = await call(server, owner, 'POST', '/api/v1/uploads', { headers: { ...tus, 'upload-length': '0' } });
        expectDocumented(t, 'POST', '/api/v1/uploads', res, [400]);
        continue;
      }
      const create = await call(server, owner, 'POST', '/api/v1/uploads', {
        headers: { ...tus, 'upload-length': String(h.bytes.length), 'upload-metadata': `filename ${Buffer.from('backup.tar').toString('base64')}` },
      });
      t.equal(create.status, 201, h.name);
      const location = create.headers.get('location')!;
      const id = location.split('/').pop()!;
      const patch = await call(server, owner, 'PATCH', location, {
        body: h.bytes,
        headers: { ...tus, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream', ...(h.encoding ? { 'content-encoding': h.encoding } : {}) },
      });
      if (h.encoding) {
        expectDocumented(t, 'PATCH', '/api/v1/uploads/{id}', patch, [415]);
        await call(server, owner, 'DELETE', location, { headers: tus });
        continue;
      }
      t.equal(patch.status, 204, `${h.name}: PATCH ${JSON.stringify(patch.body)}`);
      const complete = await call(server, owner, 'POST', `/api/v1/uploads/${id}/complete`, { json: {} });
      expectDocumented(t, 'POST', '/api/v1/uploads/{id}/complete', complete, [415]);
      t.equal(complete.body?.error?.code, 'unsupported_media_type', h.name);
      t.notOk(existsSync(path.join(dataDir, 'uploads', `${id}.part`)), 'the refused upload is discarded');
    }
    const assets = await call(server, owner, 'GET', '/api/v1/assets');
    t.same(assets.body.data.items, [], 'no asset was made');
    t.same(readdirSync(path.join(dataDir, 'uploads')), [], 'uploads/ is empty');
  });

  await t.test('PUT /api/v1/layouts/{id}/preview-image: archives are not images', async (t) => {
    const layout = await call(server, owner, 'POST', '/api/v1/layouts', {
      json: { name: 'L', width: 1920, height: 1080, background: { color: '#000000' }, zones: [{ name: 'Z', x: 0, y: 0, width: 1920, height: 1080 }] },
    });
    t.equal(layout.status, 201);
    const p = `/api/v1/layouts/${layout.body.data.id}/preview-image`;
    for (const h of hostile) {
      const res = await call(server, owner, 'PUT', p, {
        body: h.bytes,
        headers: { 'content-type': 'image/png', ...(h.encoding ? { 'content-encoding': h.encoding } : {}) },
      });
      expectDocumented(t, 'PUT', '/api/v1/layouts/{id}/preview-image', res, h.encoding ? [415] : h.bytes.length > 10 * 1024 * 1024 ? [413] : [400]);
    }
    const tarType = await call(server, owner, 'PUT', p, { body: hostile[2]!.bytes, headers: { 'content-type': 'application/x-tar' } });
    expectDocumented(t, 'PUT', '/api/v1/layouts/{id}/preview-image', tarType, [415]);
    const after = await call(server, owner, 'GET', `/api/v1/layouts/${layout.body.data.id}`);
    t.equal(after.body.data.hasCustomPreview, false, 'no preview was stored');
  });

  await t.test('PUT /api/v1/widgets/{id}/preview-image: archives are not images', async (t) => {
    const widget = await call(server, owner, 'POST', '/api/v1/widgets', { json: { name: 'W', type: 'text', settings: { text: 'Hi' } } });
    t.equal(widget.status, 201, JSON.stringify(widget.body).slice(0, 200));
    const p = `/api/v1/widgets/${widget.body.data.id}/preview-image`;
    for (const h of hostile) {
      const res = await call(server, owner, 'PUT', p, {
        body: h.bytes,
        headers: { 'content-type': 'image/png', ...(h.encoding ? { 'content-encoding': h.encoding } : {}) },
      });
      // Sniffed from the bytes: no archive is a PNG, JPEG or WebP (415); over 5 MiB 413; empty 400.
      expectDocumented(
        t,
        'PUT',
        '/api/v1/widgets/{id}/preview-image',
        res,
        h.encoding ? [415] : h.bytes.length > 5 * 1024 * 1024 ? [413] : h.bytes.length === 0 ? [400] : [415],
      );
    }
    const tarType = await call(server, owner, 'PUT', p, { body: hostile[2]!.bytes, headers: { 'content-type': 'application/x-tar' } });
    expectDocumented(t, 'PUT', '/api/v1/widgets/{id}/preview-image', tarType, [415]);
  });

  await t.test('PUT /api/v1/install/mirroring/receiver: an opaque binary, stored as a file and never unpacked', async (t) => {
    const p = '/api/v1/install/mirroring/receiver';
    const empty = await call(server, owner, 'PUT', p, { body: Buffer.alloc(0), headers: { 'content-type': 'application/octet-stream' } });
    expectDocumented(t, 'PUT', p, empty, [400]);
    const encoded = await call(server, owner, 'PUT', p, {
      body: hostile.find((h) => h.encoding)!.bytes,
      headers: { 'content-type': 'application/octet-stream', 'content-encoding': 'gzip' },
    });
    expectDocumented(t, 'PUT', p, encoded, [415]);
    const traversal = hostile.find((h) => h.name === 'traversal: ../')!;
    const stored = await call(server, owner, 'PUT', p, { body: traversal.bytes, headers: { 'content-type': 'application/octet-stream' } });
    expectDocumented(t, 'PUT', p, stored, [200]);
    t.equal(stored.body.data.sha256, createHash('sha256').update(traversal.bytes).digest('hex'));
    t.same(readdirSync(path.join(dataDir, 'releases', 'mirroring')), [`receiver-${stored.body.data.sha256}`], 'one file, nothing unpacked');
    t.equal((await call(server, owner, 'DELETE', p)).status, 204);
  });

  await t.test('POST /api/v1/system/settings/import/*: JSON only, an archive is 415', async (t) => {
    for (const p of ['/api/v1/system/settings/import/preview', '/api/v1/system/settings/import/apply']) {
      const res = await call(server, owner, 'POST', p, { body: hostile[2]!.bytes, headers: { 'content-type': 'application/x-tar' } });
      expectDocumented(t, 'POST', p, res, [415]);
      const gz = await call(server, owner, 'POST', p, { body: gzipSync('{}'), headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } });
      t.ok(gz.status < 500, `a gzipped JSON body answers ${gz.status}, not 5xx`);
    }
  });

  await t.test('POST /api/v1/data-sources/{id}/records/{recordId}/attachments: archives are neither images nor PDFs', async (t) => {
    const form = await call(server, owner, 'POST', '/api/v1/forms', { json: { name: 'Specials', fields: [{ key: 'dish', label: 'Dish', type: 'text' }] } });
    t.equal(form.status, 201);
    const sourceId: string = form.body.data.sourceId;
    const record = await call(server, owner, 'POST', `/api/v1/data-sources/${sourceId}/records`, { json: { values: { dish: 'Soup' } } });
    t.equal(record.status, 201);
    const p = `/api/v1/data-sources/${sourceId}/records/${record.body.data.id}/attachments`;
    for (const h of hostile) {
      const res = await call(server, owner, 'POST', `${p}?name=menu.pdf`, {
        body: h.bytes,
        headers: { 'content-type': 'application/pdf', ...(h.encoding ? { 'content-encoding': h.encoding } : {}) },
      });
      // Sniffed from the bytes: no archive is an image or a PDF (415); empty is 400, over 25 MiB 413.
      expectDocumented(
        t,
        'POST',
        '/api/v1/data-sources/{id}/records/{recordId}/attachments',
        res,
        h.bytes.length === 0 ? [400] : h.bytes.length > 25 * 1024 * 1024 ? [413] : [415],
      );
    }
    const detail = await call(server, owner, 'GET', `/api/v1/data-sources/${sourceId}/records/${record.body.data.id}`);
    t.same(detail.body.data.attachments, [], 'no attachment was kept');
  });

  await t.test('POST /api/v1/player-releases/upload: archives are no player release', async (t) => {
    const p = '/api/v1/player-releases/upload';
    const multipart = async (fields: Record<string, string>, bytes: Buffer) => {
      const form = new FormData();
      for (const [k, v] of Object.entries(fields)) form.append(k, v);
      form.append('file', new Blob([bytes]), 'release.bin');
      const r = new Response(form);
      return { body: Buffer.from(await r.arrayBuffer()), type: r.headers.get('content-type')! };
    };
    for (const [i, h] of hostile.entries()) {
      // As an APK (not a zip), a Linux artifact (a whole gzip tarball or a .deb) and, gzipped, a web build (no console build at its root).
      for (const [fields, bytes] of [
        [{ family: 'android', version: '1.0.0' }, h.bytes],
        [{ family: 'desktop-linux', version: `1.0.${i}`, architecture: 'x86_64' }, h.bytes],
        [{ family: 'web', version: '1.0.0' }, h.bytes.length ? gzipSync(h.bytes) : h.bytes],
      ] as const) {
        const m = await multipart(fields, bytes);
        const res = await call(server, owner, 'POST', p, {
          body: m.body,
          headers: { 'content-type': m.type, ...(h.encoding ? { 'content-encoding': h.encoding } : {}) },
        });
        // A gzipped tar is what a Linux release is (stored as a file, never unpacked): the only one accepted.
        const accepted = !h.encoding && fields.family === 'desktop-linux' && h.name === 'a real backup gzipped (.tar.gz)';
        expectDocumented(t, 'POST', p, res, h.encoding ? [415] : accepted ? [201] : [400]);
        if (accepted) acceptedReleases.push(`releases/${res.body.data.id}/`);
        else if (!h.encoding) t.equal(res.body?.error?.code, bytes.length === 0 ? 'validation_failed' : 'invalid_artifact', `${h.name} as ${fields.family}`);
      }
    }
    const raw = await call(server, owner, 'POST', p, { body: hostile[2]!.bytes, headers: { 'content-type': 'application/x-tar' } });
    expectDocumented(t, 'POST', p, raw, [415]);
    const listed = await call(server, owner, 'GET', '/api/v1/player-releases');
    t.equal(listed.body.data.length, 1, 'no other release was made');
  });

  await t.test('every route that takes a raw body was fed', async (t) => {
    const raw = ROUTES.filter((r) => r.rawBody).map((r) => `${r.method} ${r.path}`);
    for (const r of raw) t.ok(checked.has(r), `${r} is covered by this test`);
  });

  await t.test('afterwards: alive, ready, no fault logged, nothing written outside the data directory, no partial state', async (t) => {
    t.equal(server.child.exitCode, null, 'the process is alive');
    t.equal(server.child.signalCode, null);
    t.equal((await fetch(`${server.url}/readyz`)).status, 200, '/readyz 200');
    t.equal((await fetch(`${server.url}/healthz`)).status, 200);
    const faults = server
      .output()
      .split('\n')
      .filter((l) => l.includes('"fault"'));
    t.same(faults, [], 'no error went unhandled (the fault handlers would keep the process up and log it)');
    t.notMatch(server.output(), /"level":50[^\n]*"msg":"unhandled error"/, 'no 500 was answered');
    for (const where of [path.dirname(dataDir), os.tmpdir(), dataDir, path.join(dataDir, 'media'), path.join(dataDir, 'backups')]) {
      t.notOk(existsSync(path.join(where, EVIL)), `nothing named ${EVIL} in ${where}`);
    }
    const parentAfter = readdirSync(path.dirname(dataDir)).filter((n) => !parentBefore.has(n) && n.includes('evil'));
    t.same(parentAfter, [], 'nothing new beside the data directory');
    const after = tree(dataDir);
    const added = [...after.keys()].filter((k) => !dataBefore.has(k) && !/^placard\.db-(wal|shm)$/.test(k) && !k.startsWith('releases/linux-player/'));
    t.same(
      added.filter((k) => !k.startsWith('media/layout-previews') && !k.startsWith('media/tmp/') && !acceptedReleases.some((r) => k.startsWith(r))),
      [],
      'no file was added to the data directory by a refused request',
    );
  });

  server.child.kill('SIGTERM');
  t.same(await server.exited, { code: 0, signal: null }, 'and it stops cleanly');
});

t.test('a backup written onto a full disk rejects; no error event goes unheard (the tar sink threw before)', async (t) => {
  const dir = tempDataDir(t);
  const source = path.join(dir, 'big.bin');
  writeFileSync(source, randomBytes(4 * 1024 * 1024));
  const pack = tar.pack();
  const written = pipeline(pack, createWriteStream('/dev/full'));
  written.catch((err: Error) => pack.destroy(err));
  await t.rejects(addEntry(pack, 'media/big.bin', 4 * 1024 * 1024, createReadStream(source)), { code: 'ENOSPC' });
  await t.rejects(written, { code: 'ENOSPC' });
});

t.test('a full disk noticed while the backup waits for its source rejects once, with nothing unhandled', async (t) => {
  const unhandled: unknown[] = [];
  const onRejection = (err: unknown) => unhandled.push(err);
  process.on('unhandledRejection', onRejection);
  t.teardown(() => process.off('unhandledRejection', onRejection));
  // A slow source: the sink (/dev/full) fails between two chunks, when the loop is not awaiting the entry.
  async function* slow() {
    for (let i = 0; i < 8; i++) {
      yield randomBytes(1024);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
  const pack = tar.pack();
  const written = pipeline(pack, createWriteStream('/dev/full'));
  written.catch((err: Error) => pack.destroy(err));
  await t.rejects(addEntry(pack, 'media/slow.bin', 8 * 1024, Readable.from(slow())), { code: 'ENOSPC' });
  await t.rejects(written, { code: 'ENOSPC' });
  await new Promise((resolve) => setImmediate(resolve));
  t.same(unhandled, [], 'no rejection went unhandled');
});
