import { existsSync } from 'node:fs';
import path from 'node:path';
import semver from 'semver';
import type { AppDeps } from '../../platform/app-deps.js';
import { ScopeKey } from '../../platform/app-scope.js';
import { extractWebRelease } from '../../platform/http/web-release.js';
import { storedWebRelease } from './web-releases.repo.js';

/**
 * Stored web releases served at /play/v/<version>/ (docs/player-updates.md): the release of
 * family `web` of that version whose `any` artifact (a console build as a .tar.gz) is
 * stored, extracted once into `<data>/releases/<releaseId>/web/`. platform/http/console.ts
 * serves the files; this resolves a version to that directory (null: no such release).
 */

/** Extractions under way, by release id: two requests for a new version extract it once. */
const EXTRACTING = new ScopeKey('web-releases.extracting', () => new Map<string, Promise<void>>());

export function webReleaseDir(dataDir: string, releaseId: string): string {
  return path.join(dataDir, 'releases', releaseId, 'web');
}

export function webReleaseResolver(deps: Pick<AppDeps, 'db' | 'config' | 'logger' | 'scope'>): (version: string) => Promise<string | null> {
  return async (version) => {
    const clean = semver.valid(version) ? semver.clean(version) : null;
    if (!clean) return null;
    const row = await storedWebRelease(deps.db, clean);
    if (!row?.storedPath) return null;
    const dataDir = path.resolve(deps.config.dataDir);
    const dir = webReleaseDir(dataDir, row.id);
    if (existsSync(path.join(dir, 'play.html'))) return dir;
    const archive = path.resolve(dataDir, row.storedPath);
    if (!archive.startsWith(dataDir + path.sep) || !existsSync(archive)) return null;
    const running = deps.scope.get(EXTRACTING);
    let job = running.get(row.id);
    if (!job) {
      job = extractWebRelease(archive, dir, { sha256: row.sha256 }).finally(() => running.delete(row.id));
      running.set(row.id, job);
    }
    try {
      await job;
    } catch (err) {
      deps.logger.warn({ err, releaseId: row.id, version: clean }, 'web release not served: its archive does not extract');
      return null;
    }
    return dir;
  };
}
