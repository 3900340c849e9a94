import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import semver from 'semver';
import tar from 'tar-stream';
import yauzl from 'yauzl';
import type { ArtifactKind, Family } from './releases.schemas.js';

/**
 * What an uploaded artifact is, from its bytes (docs/player-releases.md "Upload checks"):
 * android: a zip holding AndroidManifest.xml (its central directory, read by yauzl);
 * desktop-linux and edge: a gzip tarball or a Debian package (an `ar` archive whose first
 * member is `debian-binary`); web: a gzip tarball with index.html, play.html and
 * version.json (`{"version"}` the release's) at its root. A refusal names why.
 */
export class ArtifactRefused extends Error {}

/** Most entries a tarball may hold, and most bytes it may unpack to (1 GiB or 16 times its size), while it is read. */
const MAX_ENTRIES = 100_000;
const maxUnpacked = (packed: number) => Math.max(1024 ** 3, packed * 16);
const MAX_VERSION_JSON = 64 * 1024;

async function head(file: string, n: number): Promise<Buffer> {
  const fh = await fs.open(file, 'r');
  try {
    const buf = Buffer.alloc(n);
    const { bytesRead } = await fh.read(buf, 0, n, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

const isGzip = (b: Buffer) => b.length >= 3 && b[0] === 0x1f && b[1] === 0x8b && b[2] === 0x08;

/**
 * A Debian package: the `ar` magic `!<arch>\n`, then the first member's 60-byte header, whose
 * 16-byte name field is `debian-binary` (GNU ar may end it with `/`) and which ends with "`\n".
 */
export function isDebianPackage(b: Buffer): boolean {
  if (b.length < 68 || b.subarray(0, 8).toString('latin1') !== '!<arch>\n') return false;
  const header = b.subarray(8, 68);
  if (header.subarray(58, 60).toString('latin1') !== '`\n') return false;
  const name = header.subarray(0, 16).toString('latin1').trimEnd().replace(/\/$/, '');
  return name === 'debian-binary';
}

/** True when the zip's central directory names AndroidManifest.xml at its root. */
function zipHasManifest(file: string): Promise<boolean> {
  return new Promise((resolve) => {
    yauzl.open(file, { lazyEntries: true, autoClose: true, strictFileNames: false, validateEntrySizes: true }, (err, zip) => {
      if (err || !zip) return resolve(false);
      let done = false;
      const finish = (v: boolean) => {
        if (done) return;
        done = true;
        zip.close();
        resolve(v);
      };
      zip.on('entry', (entry: yauzl.Entry) => {
        if (entry.fileName === 'AndroidManifest.xml') return finish(true);
        zip.readEntry();
      });
      zip.on('end', () => finish(false));
      zip.on('error', () => finish(false));
      zip.readEntry();
    });
  });
}

const rootName = (name: string) => name.replace(/^(\.\/)+/, '');

/**
 * Reads a gzip tarball to its end (a truncated one is refused); `onEntry` sees each header
 * and may read a small body. Throws ArtifactRefused when the bytes are not a whole gzip
 * tarball (or pass the caps).
 */
async function scanTarball(file: string, onEntry: (h: tar.Header, body: () => Promise<Buffer>) => Promise<void>): Promise<number> {
  const extract = tar.extract();
  const cap = maxUnpacked((await fs.stat(file)).size);
  let unpacked = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      unpacked += chunk.length;
      if (unpacked > cap) return done(new ArtifactRefused(`it unpacks to more than ${cap} bytes`));
      done(null, chunk);
    },
  });
  const source = createReadStream(file);
  const feeding = pipeline(source, createGunzip(), counter, extract).then(
    () => null,
    (err: unknown) => err,
  );
  let count = 0;
  try {
    for await (const entry of extract) {
      count++;
      if (count > MAX_ENTRIES) throw new ArtifactRefused(`it holds more than ${MAX_ENTRIES} entries`);
      let consumed = false;
      const body = async () => {
        consumed = true;
        const chunks: Buffer[] = [];
        let size = 0;
        for await (const c of entry as AsyncIterable<Buffer>) {
          size += c.length;
          if (size > MAX_VERSION_JSON) throw new ArtifactRefused(`${rootName(entry.header.name)} is larger than ${MAX_VERSION_JSON} bytes`);
          chunks.push(c);
        }
        return Buffer.concat(chunks);
      };
      await onEntry(entry.header, body);
      if (!consumed) for await (const _c of entry as AsyncIterable<Buffer>);
    }
  } catch (err) {
    extract.destroy();
    source.destroy();
    await feeding;
    if (err instanceof ArtifactRefused) throw err;
    throw new ArtifactRefused(`it is not a readable gzip tarball (${(err as Error).message})`);
  }
  const fed = await feeding;
  if (fed instanceof ArtifactRefused) throw fed;
  if (fed) throw new ArtifactRefused(`it is not a readable gzip tarball (${(fed as Error).message})`);
  if (count === 0) throw new ArtifactRefused('the tarball is empty');
  return count;
}

async function checkWeb(file: string, version: string): Promise<void> {
  const found = new Set<string>();
  let declared: string | null = null;
  await scanTarball(file, async (h, body) => {
    const name = rootName(h.name);
    if (h.type !== 'file' || !['index.html', 'play.html', 'version.json'].includes(name)) return;
    found.add(name);
    if (name !== 'version.json') return;
    let json: unknown;
    try {
      json = JSON.parse((await body()).toString('utf8'));
    } catch {
      throw new ArtifactRefused('its version.json is not JSON');
    }
    const v = (json as { version?: unknown } | null)?.version;
    declared = typeof v === 'string' ? v : null;
  });
  const missing = ['index.html', 'play.html', 'version.json'].filter((n) => !found.has(n));
  if (missing.length) throw new ArtifactRefused(`a web release is a console build: ${missing.join(', ')} missing at the tarball's root`);
  if (!declared || semver.clean(declared) !== version) {
    throw new ArtifactRefused(`its version.json says ${JSON.stringify(declared)}, not the release's version ${version}`);
  }
}

/** The artifact's kind when it is one its family takes; throws ArtifactRefused naming why not. */
export async function checkArtifact(file: string, family: Family, version: string): Promise<ArtifactKind> {
  const b = await head(file, 68);
  switch (family) {
    case 'android':
      if (await zipHasManifest(file)) return 'apk';
      throw new ArtifactRefused('an Android release is an APK: a zip holding AndroidManifest.xml, and this is not one');
    case 'web':
      if (!isGzip(b)) throw new ArtifactRefused('a web release is a gzip tarball of the console build');
      await checkWeb(file, version);
      return 'web';
    default:
      if (isDebianPackage(b)) return 'deb';
      if (isGzip(b)) {
        await scanTarball(file, async () => {});
        return 'tarball';
      }
      throw new ArtifactRefused(`the ${family} family takes a gzip tarball (.tar.gz) or a Debian package (.deb)`);
  }
}

export const EXTENSIONS: Record<ArtifactKind, string> = { apk: 'apk', tarball: 'tar.gz', deb: 'deb', web: 'tar.gz' };
