import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import tar from 'tar-stream';

/**
 * A stored web release (a console build as a .tar.gz, docs/player-updates.md), extracted once
 * for /play/v/<version>/ (platform/http/console.ts). Only regular files and directories with
 * plain relative names: an entry with `..`, an absolute name, a link or a device refuses the
 * whole archive. Extracted into a temporary directory beside the target, then renamed into
 * place, so a half-extracted build is never served.
 */

/** Bounds a hostile archive cannot pass: entries, bytes, name length. */
const MAX_ENTRIES = 20_000;
const MAX_BYTES = 512 * 1024 * 1024;
const MAX_NAME = 400;

export class WebReleaseArchiveError extends Error {
  override name = 'WebReleaseArchiveError';
}

/** The entry's path relative to the archive's root ('' for the root itself), or an error naming why it is refused. */
export function webReleaseEntryPath(name: string): string {
  if (name.length > MAX_NAME) throw new WebReleaseArchiveError(`an entry name is longer than ${MAX_NAME} characters`);
  if (name.includes('\0') || name.includes('\\')) throw new WebReleaseArchiveError('an entry name holds a NUL or a backslash');
  if (name.startsWith('/')) throw new WebReleaseArchiveError(`an entry has an absolute name (${JSON.stringify(name.slice(0, 80))})`);
  const parts = name.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.some((p) => p === '..')) throw new WebReleaseArchiveError(`an entry name climbs out of the archive (${JSON.stringify(name.slice(0, 80))})`);
  return parts.join('/');
}

/**
 * Extracts `archive` (.tar.gz) into `target`, which must not exist yet; atomic (temp dir,
 * rename). With `sha256`, the archive's bytes must hash to it first (the stored artifact's).
 */
export async function extractWebRelease(archive: string, target: string, options: { sha256?: string } = {}): Promise<void> {
  if (options.sha256) {
    const hash = createHash('sha256');
    for await (const chunk of createReadStream(archive)) hash.update(chunk as Buffer);
    const got = hash.digest('hex');
    if (got !== options.sha256) throw new WebReleaseArchiveError(`the stored archive's sha256 is ${got}, not the release's ${options.sha256}`);
  }
  const parent = path.dirname(target);
  await mkdir(parent, { recursive: true });
  const temp = path.join(parent, `.${path.basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  await mkdir(temp);
  try {
    const extract = tar.extract();
    const feeding = pipeline(createReadStream(archive), createGunzip(), extract).then(
      () => null,
      (err: unknown) => err,
    );
    let entries = 0;
    let bytes = 0;
    try {
      for await (const entry of extract) {
        const h = entry.header;
        if (++entries > MAX_ENTRIES) throw new WebReleaseArchiveError(`more than ${MAX_ENTRIES} entries`);
        const rel = webReleaseEntryPath(h.name);
        if (h.type === 'directory') {
          if (rel) await mkdir(path.join(temp, rel), { recursive: true });
          entry.resume();
          continue;
        }
        if (h.type !== 'file')
          throw new WebReleaseArchiveError(`the archive holds a ${h.type} entry (${JSON.stringify(h.name.slice(0, 80))}); a web release holds files only`);
        if (!rel) throw new WebReleaseArchiveError('a file entry has no name');
        bytes += h.size ?? 0;
        if (bytes > MAX_BYTES) throw new WebReleaseArchiveError(`more than ${MAX_BYTES} bytes`);
        const file = path.join(temp, rel);
        await mkdir(path.dirname(file), { recursive: true });
        // 'wx': a new file, never one (or a link) already there.
        await pipeline(entry, createWriteStream(file, { flags: 'wx', mode: 0o644 }));
      }
    } catch (err) {
      extract.destroy();
      await feeding;
      throw err;
    }
    const fed = await feeding;
    if (fed) throw new WebReleaseArchiveError(`the archive is damaged: ${(fed as Error).message}`);
    if (!existsSync(path.join(temp, 'play.html'))) throw new WebReleaseArchiveError('the archive has no play.html at its root');
    await rename(temp, target);
  } catch (err) {
    await rm(temp, { recursive: true, force: true });
    // Another request extracted it first: theirs is as good.
    if ((err as NodeJS.ErrnoException).code === 'ENOTEMPTY' || (err as NodeJS.ErrnoException).code === 'EEXIST') {
      if (existsSync(target)) return;
    }
    throw err;
  }
}
