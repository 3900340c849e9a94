import { createHash } from 'node:crypto';
import type { SignedIn } from './auth.js';
import type { TestApp } from './harness.js';

export const sha256 = (b: Buffer | Uint8Array) => createHash('sha256').update(b).digest('hex');

export const TUS = { 'tus-resumable': '1.0.0' };

const b64 = (s: string) => Buffer.from(s).toString('base64');

/** tus creation + one PATCH; answers the upload id. */
export async function tusUpload(app: TestApp, who: SignedIn, bytes: Buffer, metadata: Record<string, string> = {}): Promise<string> {
  const meta = Object.entries(metadata)
    .map(([k, v]) => `${k} ${b64(v)}`)
    .join(',');
  const created = await app.fetch('/api/v1/uploads', {
    method: 'POST',
    headers: { ...who.headers, ...TUS, 'upload-length': String(bytes.length), ...(meta ? { 'upload-metadata': meta } : {}) },
  });
  if (created.status !== 201) throw new Error(`creation answered ${created.status}: ${await created.text()}`);
  const location = created.headers.get('location')!;
  const patched = await app.fetch(location, {
    method: 'PATCH',
    headers: { ...who.headers, ...TUS, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
    body: bytes,
  });
  if (patched.status !== 204) throw new Error(`PATCH answered ${patched.status}: ${await patched.text()}`);
  return location.split('/').pop()!;
}

/** Uploads and completes; answers the new asset (state processing). */
export async function uploadAsset(app: TestApp, who: SignedIn, bytes: Buffer, filename: string, body: Record<string, unknown> = {}): Promise<any> {
  const id = await tusUpload(app, who, bytes, { filename });
  const res = await app.json(`/api/v1/uploads/${id}/complete`, { method: 'POST', headers: who.headers, json: body });
  if (res.status !== 201) throw new Error(`complete answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** Polls the asset until it leaves `processing` (or the timeout). */
export async function settledAsset(app: TestApp, who: SignedIn, id: string, timeoutMs = 60_000): Promise<any> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await app.json(`/api/v1/assets/${id}`, { headers: who.headers });
    if (res.status !== 200) throw new Error(`asset answered ${res.status}`);
    if (res.body.data.state !== 'processing') return res.body.data;
    if (Date.now() > until) throw new Error(`asset ${id} still processing after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Fills the app's SQLite database to a page limit (PRAGMA max_page_count on its one
 * connection), so the next write that needs a new page fails with a real SQLITE_FULL, as
 * on a full disk. Answers the function that lifts the limit again.
 */
export async function fillDatabase(app: TestApp): Promise<() => void> {
  const sqlite = app.database.sqlite;
  sqlite.exec('create table if not exists test_filler (b blob)');
  sqlite.pragma(`max_page_count = ${Number(sqlite.pragma('page_count', { simple: true }))}`);
  const insert = sqlite.prepare('insert into test_filler values (randomblob(?))');
  for (const size of [4000, 1000, 200, 20]) {
    try {
      for (let i = 0; i < 100_000; i++) insert.run(size);
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_FULL') throw err;
    }
  }
  return () => {
    sqlite.pragma('max_page_count = 4294967294');
    sqlite.exec('drop table test_filler');
  };
}

/** An error like the one a full disk gives. */
export function enospc(syscall = 'write'): NodeJS.ErrnoException {
  return Object.assign(new Error(`ENOSPC: no space left on device, ${syscall}`), { code: 'ENOSPC', errno: -28, syscall });
}
