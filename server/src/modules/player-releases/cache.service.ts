import { createHash, createPublicKey, verify } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { AppDeps } from '../../platform/app-deps.js';
import { ScopeKey } from '../../platform/app-scope.js';
import { nowIso } from '../../platform/db/ids.js';
import { notFound } from '../../platform/http/errors.js';
import { OutboundError, safeFetch } from '../../platform/http/outbound.js';
import type { ServerSecrets } from '../../platform/security/secrets.js';
import { fetchPolicy } from '../media/index.js';
import { ArtifactRefused, checkArtifact } from './artifact-check.js';
import { type ArtifactRow, artifactRows, downloadingArtifacts, releaseRow, sourceRow, updateArtifact } from './releases.repo.js';
import type { Family, Release } from './releases.schemas.js';
import { SEAL_PURPOSE } from './source.service.js';
import { releaseView, storedPathOf } from './views.js';

/**
 * `POST /player-releases/{id}/cache` (docs/player-releases.md "Cache"): each artifact not
 * here is downloaded in the background into `releases/<id>/<arch>/<file>.part`, resumed with
 * `Range: bytes=<have>-` after an interruption (in the same run, a few times, and by the next
 * cache request), then verified: its sha256, and, when PLACARD_RELEASE_SIGNING_KEY pins a
 * key, its Ed25519 signature over the 32-byte SHA-256 digest. A failed check deletes the
 * bytes. Progress (cache_bytes) is visible in GET while it runs.
 */

/** The downloads running in this app, by `<releaseId> <architecture>`. */
const RUNNING = new ScopeKey('player-releases.downloads', () => new Map<string, Promise<void>>());
const ATTEMPTS = 4;
const DOWNLOAD_TIMEOUT_MS = 60 * 60_000;
const PROGRESS_EVERY_MS = 500;

class VerifyError extends Error {}

async function fileSha256(file: string): Promise<Buffer> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest();
}

async function sizeOf(file: string): Promise<number> {
  try {
    return (await fs.stat(file)).size;
  } catch {
    return 0;
  }
}

/** The pinned key (raw 32 bytes, base64) as a KeyObject. */
const pinnedKey = (raw: string) => createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(raw, 'base64').toString('base64url') }, format: 'jwk' });

/** Checks the complete file; throws VerifyError naming why it is refused. */
async function verifyArtifact(deps: AppDeps, a: ArtifactRow, family: Family, version: string, file: string): Promise<void> {
  const size = await sizeOf(file);
  if (size !== a.size_bytes) throw new VerifyError(`size mismatch: the source announced ${a.size_bytes} bytes, ${size} arrived`);
  const digest = await fileSha256(file);
  if (digest.toString('hex') !== a.sha256)
    throw new VerifyError(`sha256 mismatch: the source announced ${a.sha256}, the bytes hash to ${digest.toString('hex')}`);
  const key = deps.config.releaseSigningKey;
  if (key) {
    if (!a.signature) throw new VerifyError('unsigned: PLACARD_RELEASE_SIGNING_KEY pins a signing key and this artifact carries no signature');
    let good = false;
    try {
      good = verify(null, digest, pinnedKey(key), Buffer.from(a.signature, 'base64'));
    } catch {
      good = false;
    }
    if (!good) throw new VerifyError('signature mismatch: the Ed25519 signature does not verify with the pinned key (PLACARD_RELEASE_SIGNING_KEY)');
  }
  try {
    await checkArtifact(file, family, version);
  } catch (err) {
    if (err instanceof ArtifactRefused) throw new VerifyError(`not a ${family} artifact: ${err.message}`);
    throw err;
  }
}

/** Appends what the source sends to the .part file, counting, with throttled progress in the database. */
async function fetchInto(deps: AppDeps, a: ArtifactRow, part: string, token: string | null, sourceOrigin: string | null): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    let have = await sizeOf(part);
    if (have > a.size_bytes) {
      await fs.rm(part, { force: true });
      have = 0;
    }
    if (have === a.size_bytes) return;
    const out = createWriteStream(part, { flags: 'a', mode: 0o644 });
    let written = have;
    let lastReport = 0;
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        if (deps.periodic.isStopping) return done(new Error('the server is stopping'));
        written += chunk.length;
        if (Date.now() - lastReport > PROGRESS_EVERY_MS) {
          lastReport = Date.now();
          void updateArtifact(deps.db, a.release_id, a.architecture, { cache_bytes: written, updated_at: nowIso() }).catch(() => {});
        }
        out.write(chunk, done);
      },
    });
    const url = a.remote_url!;
    const sameOrigin = sourceOrigin !== null && new URL(url).origin === sourceOrigin;
    let status = 0;
    let failure: Error | null = null;
    try {
      const res = await safeFetch(url, await fetchPolicy(deps), {
        timeoutMs: DOWNLOAD_TIMEOUT_MS,
        maxBytes: a.size_bytes - have,
        sink,
        headers: {
          accept: 'application/octet-stream',
          ...(have > 0 ? { range: `bytes=${have}-` } : {}),
          ...(token && sameOrigin ? { authorization: `Bearer ${token}` } : {}),
        },
      });
      status = res.status;
    } catch (err) {
      failure = err as Error;
    }
    await new Promise<void>((resolve) => out.end(resolve));
    await updateArtifact(deps.db, a.release_id, a.architecture, { cache_bytes: await sizeOf(part), updated_at: nowIso() });
    if (!failure && status === 200 && have > 0) {
      // The source ignored the Range: the whole file followed what we had. Start over.
      await fs.rm(part, { force: true });
      if (attempt < ATTEMPTS) continue;
      throw new Error('the source ignores Range requests and the download kept failing');
    }
    if (!failure && status === 416) {
      await fs.rm(part, { force: true });
      if (attempt < ATTEMPTS) continue;
    }
    if (!failure && (status === 200 || status === 206)) return;
    if (deps.periodic.isStopping) throw new Error('the server stopped during the download; cache again to resume');
    const why = failure ? (failure instanceof OutboundError ? failure.message : String(failure.message)) : `the source answered ${status}`;
    if (attempt >= ATTEMPTS || (!failure && status >= 400 && status < 500)) throw new Error(`download failed: ${why}`);
  }
}

async function download(deps: AppDeps, secrets: ServerSecrets, a: ArtifactRow, family: Family, version: string): Promise<void> {
  const stored = storedPathOf(a.release_id, a.architecture, a.file_name);
  const target = path.join(deps.config.dataDir, stored);
  const part = `${target}.part`;
  try {
    if (!a.remote_url) throw new Error('the artifact has no source URL');
    await fs.mkdir(path.dirname(target), { recursive: true });
    const source = await sourceRow(deps.db);
    const token = source?.state === 'connected' && source.token_sealed ? secrets.open(SEAL_PURPOSE, source.token_sealed) : null;
    await fetchInto(deps, a, part, token, source ? new URL(source.url).origin : null);
    try {
      await verifyArtifact(deps, a, family, version, part);
    } catch (err) {
      await fs.rm(part, { force: true }); // refused bytes are not kept
      throw err;
    }
    await fs.rename(part, target);
    await updateArtifact(deps.db, a.release_id, a.architecture, {
      stored_path: stored,
      cache_state: 'cached',
      cache_bytes: a.size_bytes,
      cache_error: null,
      updated_at: nowIso(),
    });
  } catch (err) {
    deps.logger.warn({ err, releaseId: a.release_id, architecture: a.architecture }, 'player release download failed');
    await updateArtifact(deps.db, a.release_id, a.architecture, {
      cache_state: 'failed',
      cache_bytes: await sizeOf(part),
      cache_error: String((err as Error).message).slice(0, 1000),
      updated_at: nowIso(),
    }).catch(() => {});
  }
}

/** Starts the downloads a release still needs; answers its view and whether it was already cached. */
export async function cacheRelease(deps: AppDeps, secrets: ServerSecrets, id: string): Promise<{ release: Release; alreadyCached: boolean }> {
  const row = await releaseRow(deps.db, id);
  if (!row) throw notFound('Player release');
  const artifacts = await artifactRows(deps.db, [id]);
  const running = deps.scope.get(RUNNING);
  const missing = artifacts.filter((a) => a.cache_state !== 'cached');
  if (missing.length === 0) return { release: (await releaseView(deps.db, id))!, alreadyCached: true };
  for (const a of missing) {
    if (running.has(`${a.release_id} ${a.architecture}`)) continue;
    await updateArtifact(deps.db, a.release_id, a.architecture, { cache_state: 'downloading', cache_error: null, updated_at: nowIso() });
    start(deps, secrets, a, row.family, row.version);
  }
  return { release: (await releaseView(deps.db, id))!, alreadyCached: false };
}

function start(deps: AppDeps, secrets: ServerSecrets, a: ArtifactRow, family: Family, version: string): void {
  const running = deps.scope.get(RUNNING);
  const key = `${a.release_id} ${a.architecture}`;
  if (running.has(key)) return;
  const work = download(deps, secrets, a, family, version).finally(() => running.delete(key));
  running.set(key, work);
  deps.periodic.track(work);
}

/**
 * The periodic sweep: a download left `downloading` with nobody running it (the server
 * restarted) resumes from its .part; uploads left in releases/.incoming by a crash go after a day.
 */
export async function resumeAndSweep(deps: AppDeps, secrets: ServerSecrets): Promise<void> {
  const running = deps.scope.get(RUNNING);
  for (const a of await downloadingArtifacts(deps.db)) {
    if (running.has(`${a.release_id} ${a.architecture}`) || deps.periodic.isStopping) continue;
    const release = await releaseRow(deps.db, a.release_id);
    if (release) start(deps, secrets, a, release.family, release.version);
  }
  const incoming = path.join(deps.config.dataDir, 'releases', '.incoming');
  const names = await fs.readdir(incoming).catch(() => [] as string[]);
  for (const name of names) {
    const file = path.join(incoming, name);
    const stat = await fs.stat(file).catch(() => null);
    if (stat && Date.now() - stat.mtimeMs > 24 * 3_600_000) await fs.rm(file, { recursive: true, force: true });
  }
}
