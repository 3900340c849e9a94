/**
 * Player releases for the update-deployment tests: rows in migration 0460's tables and the
 * artifact's bytes under the app's data directory, as an upload or a cache download leaves
 * them (the player-releases module makes them in production).
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { SignedIn } from './auth.js';
import type { TestApp } from './harness.js';
import { type PairedScreen, pairScreen } from './screens.js';

export interface ArtifactSpec {
  architecture: string;
  kind: 'apk' | 'tarball' | 'deb' | 'web';
  fileName?: string;
  bytes?: Buffer;
  /** false: recorded as `remote`, not stored (not cached yet). */
  stored?: boolean;
}

export interface MadeRelease {
  id: string;
  artifacts: { architecture: string; bytes: Buffer; sha256: string }[];
}

export async function makeRelease(
  app: { dataDir: string; deps: TestApp['deps'] },
  release: { family: 'desktop-linux' | 'android' | 'web' | 'edge'; version: string; channel?: 'stable' | 'beta'; artifacts: ArtifactSpec[] },
): Promise<MadeRelease> {
  const id = randomUUID();
  const now = new Date().toISOString();
  await app.deps.db
    .insertInto('player_releases')
    .values({
      id,
      family: release.family,
      version: release.version,
      channel: release.channel ?? 'stable',
      notes: `Release ${release.version}`,
      source: 'upload',
      source_release_id: null,
      created_by: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  const made: MadeRelease['artifacts'] = [];
  for (const a of release.artifacts) {
    const bytes = a.bytes ?? randomBytes(64 * 1024);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const fileName = a.fileName ?? `player-${release.version}-${a.architecture}.${a.kind === 'apk' ? 'apk' : a.kind === 'deb' ? 'deb' : 'tar.gz'}`;
    const rel = path.join('releases', id, a.architecture, fileName);
    const stored = a.stored !== false;
    if (stored) {
      mkdirSync(path.dirname(path.join(app.dataDir, rel)), { recursive: true });
      writeFileSync(path.join(app.dataDir, rel), bytes);
    }
    await app.deps.db
      .insertInto('player_release_artifacts')
      .values({
        release_id: id,
        architecture: a.architecture,
        kind: a.kind,
        file_name: fileName,
        size_bytes: bytes.length,
        sha256,
        signature: null,
        remote_url: stored ? null : 'https://releases.example.test/x',
        stored_path: stored ? rel : null,
        cache_state: stored ? 'cached' : 'remote',
        cache_bytes: stored ? bytes.length : 0,
        cache_error: null,
        updated_at: now,
      })
      .execute();
    made.push({ architecture: a.architecture, bytes, sha256 });
  }
  return { id, artifacts: made };
}

/** A paired screen that heartbeats its player facts (family, architecture, version). */
export async function fleetScreen(
  app: TestApp,
  admin: SignedIn,
  name: string,
  facts: { family: string | null; architecture?: string | null; version: string | null; locationId?: string },
): Promise<PairedScreen & { name: string }> {
  const s = await pairScreen(app, admin, { name, playerFamily: facts.family ?? 'web', locationId: facts.locationId });
  await heartbeat(app, s, { playerFamily: facts.family, playerArchitecture: facts.architecture ?? null, playerVersion: facts.version });
  return { ...s, name };
}

export async function heartbeat(app: TestApp, s: PairedScreen, body: Record<string, unknown>): Promise<void> {
  const res = await app.json('/api/v1/player/heartbeat', { method: 'POST', headers: s.headers, json: body });
  if (res.status !== 200) throw new Error(`heartbeat: ${res.status} ${JSON.stringify(res.body)}`);
}

/** Runs the rollout tick and reads the deployment until `done` says so (at most `ms`). */
export async function until(app: TestApp, admin: SignedIn, id: string, done: (d: any) => boolean, ms = 15_000): Promise<any> {
  const limit = Date.now() + ms;
  for (;;) {
    await app.deps.periodic.runNow('update-deployments.tick');
    const d = (await app.json(`/api/v1/update-deployments/${id}`, { headers: admin.headers })).body.data;
    if (done(d)) return d;
    if (Date.now() > limit) throw new Error(`deployment never reached the state: ${JSON.stringify(d)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
