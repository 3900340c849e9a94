import semver from 'semver';
import { z } from 'zod';
import type { AppDeps } from '../../platform/app-deps.js';
import { newId, nowIso } from '../../platform/db/ids.js';
import { ApiError } from '../../platform/http/errors.js';
import type { ServerSecrets } from '../../platform/security/secrets.js';
import { insertRemoteRelease, releaseOf, type ReleaseRow, screenPlayers, updateSource } from './releases.repo.js';
import { ARCHITECTURES, CHANNELS, FAMILIES, type Family, KINDS, type Release } from './releases.schemas.js';
import { connectedSource, SourceError, sourceFetch, tokenRefused } from './source.service.js';
import { releaseViews } from './views.js';

/**
 * `POST /player-releases/check` (docs/player-releases.md "Check"): asks the source for the
 * families and architectures the screens run, records the releases it did not know
 * (`release-source`, artifacts `remote`), and answers, per family and architecture, the newest
 * stable release when it is newer (semver) than the oldest version a screen of it runs.
 */

const FileName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._+-]{0,199}$/)
  .refine((n) => !n.includes('..'));
const RemoteArtifact = z.object({
  architecture: z.enum(ARCHITECTURES),
  kind: z.enum(KINDS),
  fileName: FileName,
  url: z.string().min(1).max(4000),
  sizeBytes: z.number().int().min(1),
  sha256: z.string().regex(/^[0-9a-fA-F]{64}$/),
  signature: z.string().max(200).nullable().optional(),
});
const RemoteRelease = z.object({
  id: z.string().min(1).max(200),
  family: z.enum(FAMILIES),
  version: z.string().max(100),
  channel: z.enum(CHANNELS),
  notes: z.string().max(10_000).default(''),
  artifacts: z
    .array(RemoteArtifact)
    .min(1)
    .max(20)
    .refine((list) => new Set(list.map((a) => a.architecture)).size === list.length, 'one artifact per architecture'),
});
const ReleaseList = z.object({ releases: z.array(z.unknown()).max(1000) });
type Remote = z.infer<typeof RemoteRelease>;

/** A screen's release family and architecture (the release contract): null when it never reported. */
export function screenTarget(s: { player_family: string | null; player_architecture: string | null; player_version: string | null }) {
  const family: Family | null =
    s.player_family === 'android' || s.player_family === 'desktop-linux' || s.player_family === 'edge' ? s.player_family : s.player_version ? 'web' : null;
  if (!family) return null;
  return { family, architecture: s.player_architecture ?? 'any', version: s.player_version };
}

const fits = (r: Remote, architecture: string) =>
  architecture === 'any' || r.artifacts.some((a) => a.architecture === architecture || a.architecture === 'any');

export async function checkReleases(deps: AppDeps, secrets: ServerSecrets) {
  const source = await connectedSource(deps, secrets);
  const groups = new Map<string, { family: Family; architecture: string; versions: string[] }>();
  for (const s of await screenPlayers(deps.db)) {
    const target = screenTarget(s);
    if (!target) continue;
    const key = `${target.family} ${target.architecture}`;
    const g = groups.get(key) ?? { family: target.family, architecture: target.architecture, versions: [] };
    const v = semver.valid(semver.clean(target.version ?? '') ?? '');
    if (v) g.versions.push(v);
    groups.set(key, g);
  }

  const offered = new Map<string, Remote>(); // by family and version
  const newer: { family: Family; architecture: string; currentVersion: string | null; latestVersion: string }[] = [];
  for (const g of [...groups.values()].sort((a, b) => `${a.family} ${a.architecture}`.localeCompare(`${b.family} ${b.architecture}`))) {
    const q = new URLSearchParams({ family: g.family, ...(g.architecture !== 'any' ? { architecture: g.architecture } : {}) });
    let remote: Remote[];
    try {
      const res = await sourceFetch(deps, `${source.url}/v1/releases?${q}`, { token: source.token });
      if (res.status === 401) {
        await tokenRefused(deps);
        throw new ApiError('release_source_not_connected', 'The release source refused the token: connect again');
      }
      let body: unknown = null;
      try {
        body = JSON.parse(res.body.toString('utf8'));
      } catch {
        // handled below
      }
      const list = res.status === 200 ? ReleaseList.safeParse(body) : null;
      if (!list?.success)
        throw new SourceError(`the release list answered ${res.status}${res.status === 200 ? ' with something that is not a release list' : ''}`);
      // A release the server cannot use (bad version, unsafe file name...) is left out, not fatal.
      remote = list.data.releases.flatMap((r) => {
        const p = RemoteRelease.safeParse(r);
        const version = p.success ? semver.valid(semver.clean(p.data.version) ?? '') : null;
        return p.success && version && p.data.family === g.family ? [{ ...p.data, version }] : [];
      });
    } catch (err) {
      if (!(err instanceof SourceError)) throw err;
      await updateSource(deps.db, { error: err.message, updated_at: nowIso() });
      throw new ApiError('release_source_not_connected', `The release source could not be asked: ${err.message}`);
    }
    const fitting = remote.filter((r) => fits(r, g.architecture));
    for (const r of fitting) offered.set(`${r.family} ${r.version}`, r);
    const latest = fitting
      .filter((r) => r.channel === 'stable')
      .map((r) => r.version)
      .sort(semver.rcompare)[0];
    const current = g.versions.sort(semver.compare)[0] ?? null;
    if (latest && (!current || semver.gt(latest, current)))
      newer.push({ family: g.family, architecture: g.architecture, currentVersion: current, latestVersion: latest });
  }

  const rows: ReleaseRow[] = [];
  const now = nowIso();
  for (const r of offered.values()) {
    const id = newId();
    await insertRemoteRelease(
      deps.db,
      {
        id,
        family: r.family,
        version: r.version,
        channel: r.channel,
        notes: r.notes,
        source: 'release-source',
        source_release_id: r.id,
        created_by: null,
        created_at: now,
        updated_at: now,
      },
      r.artifacts.map((a) => ({
        release_id: id,
        architecture: a.architecture,
        kind: a.kind,
        file_name: a.fileName,
        size_bytes: a.sizeBytes,
        sha256: a.sha256.toLowerCase(),
        signature: a.signature ?? null,
        remote_url: new URL(a.url, `${source.url}/`).toString(),
        stored_path: null,
        cache_state: 'remote' as const,
        cache_bytes: 0,
        cache_error: null,
        updated_at: now,
      })),
    );
    const row = await releaseOf(deps.db, r.family, r.version);
    if (row) rows.push(row);
  }
  await updateSource(deps.db, { checked_at: now, error: null, updated_at: now });
  const releases: Release[] = await releaseViews(deps.db, rows);
  return { checkedAt: now, releases, newer };
}
