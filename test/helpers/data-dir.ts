import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { listFiles } from '../../server/src/modules/system/backup-create.js';

/** Writes `count` random media files of `size` bytes, content-addressed like the media store. */
export function writeMedia(dataDir: string, count: number, size: number): void {
  for (let i = 0; i < count; i++) {
    const data = randomBytes(size);
    const sha = createHash('sha256').update(data).digest('hex');
    const dir = path.join(dataDir, 'media', sha.slice(0, 2));
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, sha), data);
  }
}

/** sha256 of every file under media/, by relative path. */
export async function mediaDigest(dataDir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const f of await listFiles(path.join(dataDir, 'media'))) {
    out[f.rel] = createHash('sha256')
      .update(readFileSync(path.join(dataDir, 'media', f.rel)))
      .digest('hex');
  }
  return out;
}
