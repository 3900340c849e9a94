import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';

const SHA256 = /^[0-9a-f]{64}$/;

/** Errors of a full disk (or quota): answered 507 `insufficient_storage`. */
export function isDiskFull(err: unknown): boolean {
  const code = (err as { code?: string } | null)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

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

/**
 * The content-addressed media store: `<dataDir>/media/<aa>/<bb>/<sha256>`. Files arrive
 * as temp files that are fsynced and renamed into place (then the directory fsynced)
 * before any row points at them. Paths are made here from hashes only.
 */
export class MediaStore {
  readonly root: string;
  readonly tmpDir: string;

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
   * Moves `file` (on the same filesystem) into the store under its hash; when the store
   * already holds those bytes the file is removed instead. Answers the hash and size.
   */
  async adopt(file: string, known?: { sha256: string; size: number }): Promise<{ sha256: string; size: number }> {
    const { sha256, size } = known ?? (await hashFile(file));
    const target = this.pathOf(sha256);
    if (await this.has(sha256)) {
      await fs.rm(file, { force: true });
      // Fresh again: pruning (which spares young files) must not take it before the new row commits.
      const now = new Date();
      await fs.utimes(target, now, now).catch(() => {});
      return { sha256, size };
    }
    await fsyncPath(file, 'r+');
    await fs.mkdir(path.dirname(target), { recursive: true });
    try {
      await fs.rename(file, target);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
      // uploads/ on another filesystem than media/: copy to a temp name beside the target, then rename.
      const tmp = `${target}.${randomBytes(4).toString('hex')}.tmp`;
      try {
        await fs.copyFile(file, tmp);
        await fsyncPath(tmp, 'r+');
        await fs.rename(tmp, target);
      } catch (e) {
        await fs.rm(tmp, { force: true });
        throw e;
      }
      await fs.rm(file, { force: true });
    }
    await fsyncPath(path.dirname(target));
    return { sha256, size };
  }

  /** Writes bytes to the store (small outputs: thumbnails). */
  async put(bytes: Buffer): Promise<{ sha256: string; size: number }> {
    await fs.mkdir(this.tmpDir, { recursive: true });
    const tmp = this.tempPath();
    try {
      await fs.writeFile(tmp, bytes);
      return await this.adopt(tmp, { sha256: createHash('sha256').update(bytes).digest('hex'), size: bytes.length });
    } catch (err) {
      await fs.rm(tmp, { force: true });
      throw err;
    }
  }

  async remove(sha256: string): Promise<void> {
    await fs.rm(this.pathOf(sha256), { force: true });
  }
}
