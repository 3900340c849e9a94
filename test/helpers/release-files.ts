import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Test } from 'tap';
import tarStream from 'tar-stream';

/** A real gzip tarball of `files` (name -> content), as a player release artifact. */
export async function tarball(files: Record<string, string | Buffer>): Promise<Buffer> {
  const pack = tarStream.pack();
  const chunks: Buffer[] = [];
  const done = new Promise<void>((resolve, reject) => {
    pack.on('data', (c) => chunks.push(c as Buffer));
    pack.on('end', () => resolve());
    pack.on('error', reject);
  });
  for (const [name, content] of Object.entries(files)) pack.entry({ name, mode: 0o755 }, content);
  pack.finalize();
  await done;
  return gzipSync(Buffer.concat(chunks));
}

/** Writes `bytes` as `name` in a temp directory (removed after the test); answers its path and sha256. */
export function releaseFile(t: Test, name: string, bytes: Buffer): { file: string; sha256: string; size: number } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'placard-release-'));
  t.teardown(() => import('node:fs').then((fs) => fs.rmSync(dir, { recursive: true, force: true })));
  const file = path.join(dir, name);
  writeFileSync(file, bytes);
  return { file, sha256: createHash('sha256').update(bytes).digest('hex'), size: bytes.length };
}

/** Uploads a release artifact through the API (multipart), as the console's form does; answers the status and body. */
export async function uploadRelease(
  app: { url: string },
  headers: Record<string, string>,
  fields: { family: string; version: string; channel?: string; architecture?: string; notes?: string },
  fileName: string,
  bytes: Buffer,
): Promise<{ status: number; body: any }> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) form.set(k, v);
  form.set('file', new Blob([new Uint8Array(bytes)]), fileName);
  const res = await fetch(`${app.url}/api/v1/player-releases/upload`, { method: 'POST', headers, body: form });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
