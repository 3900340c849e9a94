import type { Db } from '../../platform/db/database.js';
import type { RealtimeHub } from '../../platform/realtime/hub.js';
import { allScreenIds, incrementManifestRevisions } from './screens.repo.js';

export interface RevisionDeps {
  db: Db;
  /** When absent (scripts, tests without a hub), revisions still bump; nothing is pushed. */
  realtime?: RealtimeHub;
}

/**
 * Tells screens that what they should play may have changed: increments each screen's
 * `manifest_revision` and pushes `{type: 'manifest.changed', revision}` on its socket (at
 * once, or in turn when many screens are told together: `RealtimeHub.pushManifestChanged`).
 * Call it after the change has committed (the player fetches the manifest next).
 * Unknown ids are ignored; duplicates count once.
 */
export async function bumpManifestRevision(deps: RevisionDeps, screenIds: string[]): Promise<void> {
  const ids = [...new Set(screenIds)];
  if (ids.length === 0) return;
  const rows = await incrementManifestRevisions(deps.db, ids);
  if (!deps.realtime) return;
  for (const r of rows) deps.realtime.pushManifestChanged(r.id, r.manifest_revision);
}

/** Every screen's revision (e.g. after a change that affects the whole fleet: idle slide, settings). */
export async function bumpAllManifestRevisions(deps: RevisionDeps): Promise<void> {
  await bumpManifestRevision(deps, await allScreenIds(deps.db));
}
