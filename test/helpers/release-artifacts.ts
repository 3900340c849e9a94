import { gzipSync, crc32 } from 'node:zlib';
import tar from 'tar-stream';

/** Real release artifacts made in tests: zips (APKs), gzip tarballs, Debian packages, web builds. */

/** A zip of stored (uncompressed) entries, byte-exact per APPNOTE: local headers, central directory, end record. */
export function makeZip(entries: { name: string; body: Buffer | string }[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name, 'utf8');
    const body = Buffer.isBuffer(e.body) ? e.body : Buffer.from(e.body);
    const crc = crc32(body);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed
    local.writeUInt16LE(0, 6); // flags
    local.writeUInt16LE(0, 8); // stored
    local.writeUInt16LE(0, 10); // time
    local.writeUInt16LE(0x21, 12); // date: 1980-01-01
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(body.length, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    locals.push(local, name, body);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4); // made by
    central.writeUInt16LE(20, 6); // needed
    central.writeUInt16LE(0, 8);
    central.writeUInt16LE(0, 10);
    central.writeUInt16LE(0, 12);
    central.writeUInt16LE(0x21, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(body.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt16LE(0, 30); // extra
    central.writeUInt16LE(0, 32); // comment
    central.writeUInt16LE(0, 34); // disk
    central.writeUInt16LE(0, 36); // internal attributes
    central.writeUInt32LE(0, 38); // external attributes
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += 30 + name.length + body.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(0, 4);
  end.writeUInt16LE(0, 6);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  end.writeUInt16LE(0, 20);
  return Buffer.concat([...locals, cd, end]);
}

/** An APK-shaped zip: AndroidManifest.xml, classes.dex, a resource. */
export const makeApk = () =>
  makeZip([
    { name: 'AndroidManifest.xml', body: Buffer.from([0x03, 0x00, 0x08, 0x00, 0x10, 0x00, 0x00, 0x00]) },
    { name: 'classes.dex', body: 'dex\n035\0fake' },
    { name: 'res/values/strings.xml', body: '<resources/>' },
  ]);

/** A gzip tarball of regular files. */
export async function makeTarGz(entries: { name: string; body: Buffer | string }[]): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  pack.on('data', (c: unknown) => chunks.push(c as Buffer));
  const ended = new Promise<void>((resolve, reject) => {
    pack.on('end', resolve);
    pack.on('error', reject);
  });
  for (const e of entries) pack.entry({ name: e.name, type: 'file', mode: 0o644, mtime: new Date(0) }, e.body);
  pack.finalize();
  await ended;
  return gzipSync(Buffer.concat(chunks));
}

/** A web release: the console build's shape (index.html, play.html, version.json, assets). */
export const makeWebBuild = (version: string, extra: { name: string; body: string }[] = []) =>
  makeTarGz([
    { name: 'index.html', body: '<!doctype html><title>Placard</title>' },
    { name: 'play.html', body: '<!doctype html><title>Player</title>' },
    { name: 'version.json', body: JSON.stringify({ version }) },
    { name: 'assets/app.js', body: 'console.log(1)' },
    ...extra,
  ]);

/** One `ar` member: the 60-byte header (name, mtime, uid, gid, mode, size, "`\n"), the bytes, a pad byte to an even offset. */
function arMember(name: string, body: Buffer): Buffer {
  const h = `${name.padEnd(16)}${'0'.padEnd(12)}${'0'.padEnd(6)}${'0'.padEnd(6)}${'100644'.padEnd(8)}${String(body.length).padEnd(10)}\`\n`;
  return Buffer.concat([Buffer.from(h, 'latin1'), body, body.length % 2 ? Buffer.from('\n') : Buffer.alloc(0)]);
}

/** A Debian package: `!<arch>\n`, debian-binary ("2.0\n"), control.tar.gz, data.tar.gz. */
export async function makeDeb(firstMember = 'debian-binary'): Promise<Buffer> {
  const control = await makeTarGz([{ name: './control', body: 'Package: placard-player\nVersion: 2.0.0\nArchitecture: amd64\n' }]);
  const data = await makeTarGz([{ name: './usr/bin/placard-player', body: '#!/bin/sh\necho placard\n' }]);
  return Buffer.concat([
    Buffer.from('!<arch>\n', 'latin1'),
    arMember(firstMember, Buffer.from('2.0\n')),
    arMember('control.tar.gz', control),
    arMember('data.tar.gz', data),
  ]);
}
