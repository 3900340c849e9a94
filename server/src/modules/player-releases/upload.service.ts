import { closeSync, fsyncSync, openSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Context } from 'koa';
import semver from 'semver';
import { newId, nowIso } from '../../platform/db/ids.js';
import { ApiError } from '../../platform/http/errors.js';
import { receiveFile } from '../../platform/http/receive-file.js';
import { cachedSettings } from '../system/index.js';
import { ArtifactRefused, checkArtifact, EXTENSIONS } from './artifact-check.js';
import { artifactRow, insertArtifact, releaseOf } from './releases.repo.js';
import { type Release, UploadFields } from './releases.schemas.js';
import { releaseView, storedPathOf } from './views.js';

/** Where uploads land while they arrive and are checked (inside the data directory, removed after). */
export const incomingDir = (dataDir: string) => path.join(dataDir, 'releases', '.incoming');

const invalid = (message: string, pathTo: string) =>
  new ApiError('validation_failed', message, { details: { issues: [{ location: 'body', path: [pathTo], message, code: 'invalid' }] } });

function syncDir(dir: string): void {
  try {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // some file systems cannot fsync a directory
  }
}

/** A multipart field as a string (the first when repeated). */
function fieldsOf(ctx: Context): Record<string, string> {
  const body = (ctx.request as unknown as { body?: Record<string, unknown> }).body ?? {};
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(body)) {
    const first = Array.isArray(v) ? v[0] : v;
    if (typeof first === 'string') out[k] = first;
  }
  return out;
}

/**
 * `POST /player-releases/upload`: the file streamed to disk with its sha256, the fields
 * validated, the bytes checked to be what the family takes, then moved to
 * `releases/<id>/<arch>/<file>` and recorded (the release made when new). Nothing is kept on a refusal.
 */
export async function uploadRelease(ctx: Context, userId: string): Promise<Release> {
  const { deps } = ctx;
  const settings = await cachedSettings(deps.db);
  const maxBytes = Math.min(deps.config.uploadMaxBytes, settings.uploads.maxSizeBytes);
  const got = await receiveFile(ctx, { dir: incomingDir(deps.config.dataDir), maxBytes, field: 'file', what: 'A release artifact' });
  let placed: string | null = null;
  try {
    const parsed = UploadFields.safeParse(fieldsOf(ctx));
    if (!parsed.success) {
      throw new ApiError('validation_failed', 'The upload’s fields are invalid', {
        details: {
          issues: parsed.error.issues.map((i) => ({ location: 'body', path: i.path.map(String), message: i.message, code: i.code })),
        },
      });
    }
    const f = parsed.data;
    const version = semver.valid(semver.clean(f.version) ?? '');
    if (!version) throw invalid(`${JSON.stringify(f.version.slice(0, 100))} is not a semantic version (1.2.3)`, 'version');
    if ((f.family === 'desktop-linux' || f.family === 'edge') && f.architecture === 'any') {
      throw invalid(`a ${f.family} release needs its architecture (x86_64 or aarch64)`, 'architecture');
    }
    if (f.family === 'web' && f.architecture !== 'any') throw invalid('a web release runs on every architecture: architecture is any', 'architecture');

    const existing = await releaseOf(deps.db, f.family, version);
    const taken = () => new ApiError('artifact_exists', `${f.family} ${version} already has an artifact for ${f.architecture}`);
    if (existing && (await artifactRow(deps.db, existing.id, f.architecture))) throw taken();

    let kind: Awaited<ReturnType<typeof checkArtifact>>;
    try {
      kind = await checkArtifact(got.file, f.family, version);
    } catch (err) {
      if (err instanceof ArtifactRefused) throw new ApiError('invalid_artifact', `The file was refused: ${err.message}`);
      throw err;
    }

    // Twice at most: when another upload made the same new release meanwhile, the artifact joins it.
    let release = existing;
    for (let attempt = 0; ; attempt++) {
      const releaseId = release?.id ?? newId();
      const fileName = `placard-${f.family}-${version}-${f.architecture}.${EXTENSIONS[kind]}`;
      const stored = storedPathOf(releaseId, f.architecture, fileName);
      const target = path.join(deps.config.dataDir, stored);
      await fs.mkdir(path.dirname(target), { recursive: true });
      const handle = await fs.open(got.file, 'r+');
      await handle.sync();
      await handle.close();
      // A link never replaces a file: two uploads of one architecture at once cannot overwrite each other's bytes.
      try {
        await fs.link(got.file, target);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw taken();
        throw err;
      }
      placed = target;
      syncDir(path.dirname(target));
      const now = nowIso();
      const inserted = await insertArtifact(
        deps.db,
        release
          ? null
          : {
              id: releaseId,
              family: f.family,
              version,
              channel: f.channel,
              notes: f.notes,
              source: 'upload',
              source_release_id: null,
              created_by: userId,
              created_at: now,
              updated_at: now,
            },
        {
          release_id: releaseId,
          architecture: f.architecture,
          kind,
          file_name: fileName,
          size_bytes: got.sizeBytes,
          sha256: got.sha256,
          signature: null,
          remote_url: null,
          stored_path: stored,
          cache_state: 'cached',
          cache_bytes: got.sizeBytes,
          cache_error: null,
          updated_at: now,
        },
      ).catch((err: unknown) => {
        // Another upload made the same release meanwhile: the unique (family, version) says so.
        if (/UNIQUE constraint failed: player_releases/.test(String((err as Error).message))) return 'raced' as const;
        throw err;
      });
      if (inserted === true) {
        placed = null;
        return (await releaseView(deps.db, releaseId))!;
      }
      await fs.rm(target, { force: true });
      placed = null;
      if (inserted === 'raced' && attempt === 0) {
        release = await releaseOf(deps.db, f.family, version);
        if (release) continue;
      }
      throw taken();
    }
  } finally {
    await fs.rm(got.file, { force: true });
    if (placed) await fs.rm(placed, { force: true });
  }
}
