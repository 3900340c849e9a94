import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { KeyedLocks } from './locks.js';

const SHA256 = /^[0-9a-f]{64}$/;

/**
 * The file-system calls through which files enter the store. Replaceable per store, so a
 * test can make one of them fail the way a full disk does (ENOSPC) without filling a disk.
 */
export interface StoreIo {
  link(existing: string, newPath: string): Promise<void>;
  copyFile(src: string, dest: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  writeFile(file: string, bytes: Buffer): Promise<void>;
}

export const realStoreIo = (): StoreIo => ({
  link: (a, b) => fs.link(a, b),
  copyFile: (a, b) => fs.copyFile(a, b),
  rename: (a, b) => fs.rename(a, b),
  writeFile: (f, b) => fs.writeFile(f, b),
});

/** SHA-256 (hex) of a file, streamed. */
export async function hashFile(file: string): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  await pipeline(createReadStream(file, { highWaterMark: 1024 * 1024 }), async function* (source: AsyncIterable<Buffer>) {
    for await (const chunk of source) {
      hash.update(chunk);
      size += chunk.length;
    }
    yield* [];
  });
  return { sha256: hash.digest('hex'), size };
}

async function fsyncPath(p: string, flags = 'r'): Promise<void> {
  const handle = await fs.open(p, flags);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Link errors that mean "this file system cannot hard-link here": copy instead. */
const NO_LINK = new Set(['EXDEV', 'EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EMLINK']);

/**
 * The content-addressed media store: `<dataDir>/media/<aa>/<bb>/<sha256>`. Files arrive
 * as temp files that are fsynced and renamed (or hard-linked) into place, then the
 * directory fsynced, before any row points at them. Paths are made here from hashes only.
 *
 * `locks` serialises work on one hash: whoever adopts a file holds its hash until the row
 * that references it commits, and whoever removes an unreferenced file holds it while it
 * checks and removes, so a file is never removed between its adoption and its commit.
 */
export class MediaStore {
  readonly root: string;
  readonly tmpDir: string;
  readonly locks = new KeyedLocks();
  io: StoreIo = realStoreIo();

  constructor(dataDir: string) {
    this.root = path.join(dataDir, 'media');
    this.tmpDir = path.join(dataDir, 'media', 'tmp');
  }

  pathOf(sha256: string): string {
    if (!SHA256.test(sha256)) throw new Error('not a sha256');
    return path.join(this.root, sha256.slice(0, 2), sha256.slice(2, 4), sha256);
  }

  /** A fresh directory for one job's outputs (removed by the caller). */
  async workDir(): Promise<string> {
    await fs.mkdir(this.tmpDir, { recursive: true });
    return fs.mkdtemp(path.join(this.tmpDir, 'work-'));
  }

  tempPath(): string {
    return path.join(this.tmpDir, `in-${Date.now()}-${randomBytes(6).toString('hex')}`);
  }

  async has(sha256: string): Promise<boolean> {
    try {
      await fs.access(this.pathOf(sha256));
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Puts `file` (on the same filesystem) into the store under its hash; when the store
   * already holds those bytes nothing is written. Without `keepSource` the file is moved
   * (or removed when the store had its bytes); with it the file stays where it is (hard
   * link, or a copy where links are impossible) and the caller removes it after its commit,
   * so a failed commit loses nothing. Answers the hash, the size, and whether this call
   * created the store file (the caller may remove it again when its commit fails). Call
   * it holding `locks` on the hash.
   */
  async adopt(
    file: string,
    known?: { sha256: string; size: number },
    options: { keepSource?: boolean } = {},
  ): Promise<{ sha256: string; size: number; created: boolean }> {
    const { sha256, size } = known ?? (await hashFile(file));
    const target = this.pathOf(sha256);
    if (await this.has(sha256)) {
      if (!options.keepSource) await fs.rm(file, { force: true });
      // Fresh again: pruning (which spares young files) must not take it before the new row commits.
      const now = new Date();
      await fs.utimes(target, now, now).catch(() => {});
      return { sha256, size, created: false };
    }
    await fsyncPath(file, 'r+');
    await fs.mkdir(path.dirname(target), { recursive: true });
    const viaCopy = async () => {
      // Another filesystem (or no hard links): copy to a temp name beside the target, then rename.
      const tmp = `${target}.${randomBytes(4).toString('hex')}.tmp`;
      try {
        await this.io.copyFile(file, tmp);
        await fsyncPath(tmp, 'r+');
        await this.io.rename(tmp, target);
      } catch (e) {
        await fs.rm(tmp, { force: true });
        throw e;
      }
    };
    if (options.keepSource) {
      try {
        await this.io.link(file, target);
      } catch (err) {
        if (!NO_LINK.has((err as NodeJS.ErrnoException).code ?? '')) throw err;
        await viaCopy();
      }
    } else {
      try {
        await this.io.rename(file, target);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
        await viaCopy();
        await fs.rm(file, { force: true });
      }
    }
    await fsyncPath(path.dirname(target));
    return { sha256, size, created: true };
  }

  /** Writes bytes to the store (small outputs: thumbnails). */
  async put(bytes: Buffer): Promise<{ sha256: string; size: number }> {
    await fs.mkdir(this.tmpDir, { recursive: true });
    const tmp = this.tempPath();
    try {
      await this.io.writeFile(tmp, bytes);
      const { sha256, size } = await this.adopt(tmp, { sha256: createHash('sha256').update(bytes).digest('hex'), size: bytes.length });
      return { sha256, size };
    } catch (err) {
      await fs.rm(tmp, { force: true });
      throw err;
    }
  }

  async remove(sha256: string): Promise<void> {
    await fs.rm(this.pathOf(sha256), { force: true });
  }
}
