import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import tar from 'tar-stream';
import type { Kysely } from 'kysely';
import { newId } from '../../server/src/platform/db/ids.js';
import { CONSOLE_DIST } from './browser.js';

/**
 * A web release as helper A's upload stores it (release-contract.md "Web releases"): the
 * console build as a .tar.gz with another version.json, made in the test from console/dist.
 */
export function webReleaseTarball(dir: string, version: string): string {
  const staging = path.join(dir, `dist-${version}`);
  cpSync(CONSOLE_DIST, staging, { recursive: true });
  writeFileSync(path.join(staging, 'version.json'), `${JSON.stringify({ version })}\n`);
  const file = path.join(dir, `placard-web-${version}.tar.gz`);
  execFileSync('tar', ['-czf', file, '-C', staging, '.']);
  return file;
}

/** A .tar.gz of the given entries (hostile ones included: any name, links). */
export async function tarGz(entries: Array<{ name: string; body?: string; type?: 'file' | 'directory' | 'symlink'; linkname?: string }>): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  pack.on('data', (c: unknown) => chunks.push(c as Buffer));
  const done = new Promise<void>((resolve, reject) => (pack.on('end', resolve), pack.on('error', reject)));
  for (const e of entries) {
    if (e.type === 'symlink' || e.type === 'directory') pack.entry({ name: e.name, type: e.type, linkname: e.linkname });
    else pack.entry({ name: e.name }, e.body ?? '');
  }
  pack.finalize();
  await done;
  return gzipSync(Buffer.concat(chunks));
}

/**
 * Stores `archive` as the `any` artifact of web release `version`, the way the player-releases
 * module does after a verified upload (stored_path under the data directory, cache_state cached).
 */
export async function storeWebRelease(db: Kysely<any>, dataDir: string, version: string, archive: string | Buffer): Promise<string> {
  const id = newId();
  const fileName = `placard-web-${version}.tar.gz`;
  const rel = `releases/${id}/any/${fileName}`;
  mkdirSync(path.join(dataDir, 'releases', id, 'any'), { recursive: true });
  const bytes = typeof archive === 'string' ? readFileSync(archive) : archive;
  writeFileSync(path.join(dataDir, rel), bytes);
  const now = new Date().toISOString();
  await db
    .insertInto('player_releases')
    .values({
      id,
      family: 'web',
      version,
      channel: 'stable',
      notes: '',
      source: 'upload',
      source_release_id: null,
      created_by: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  await db
    .insertInto('player_release_artifacts')
    .values({
      release_id: id,
      architecture: 'any',
      kind: 'web',
      file_name: fileName,
      size_bytes: statSync(path.join(dataDir, rel)).size,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      signature: null,
      remote_url: null,
      stored_path: rel,
      cache_state: 'cached',
      cache_bytes: bytes.length,
      cache_error: null,
      updated_at: now,
    })
    .execute();
  return id;
}
