/**
 * Campaigns (docs/campaigns.md): drafts checked against what exists, releases (content
 * published and placements turned into schedules in one transaction), preflight.
 */
import type { AppDeps } from '../../platform/app-deps.js';
import type { Db } from '../../platform/db/database.js';
import { newId, nowIso } from '../../platform/db/ids.js';
import { storableJson } from '../../platform/db/json.js';
import { ApiError, conflict, invalidField, invalidReference, type Reference } from '../../platform/http/errors.js';
import type { Role } from '../../platform/http/auth.js';
import { roleAtLeast } from '../../platform/http/auth.js';
import { forgetContent, type PublicationSource, publisherNeededToDelete, submitInstead } from '../../platform/publications.js';
import { contentChanged } from '../content/index.js';
import { deleteCampaignSchedules, replaceCampaignSchedules } from '../schedules/index.js';
import { approvalsRequired } from '../system/index.js';
import {
  type CampaignDraft,
  type CampaignRow,
  type ContentRef,
  draftOf,
  deleteCampaignAtRevision,
  draftOfSnapshot,
  getCampaignRow,
  getReleaseRow,
  insertCampaign,
  insertRelease,
  rowExists,
  updateCampaignAtRevision,
  missingContent,
  nextReleaseNumber,
  type ReleasedItem,
  type ReleaseRow,
  type ReleaseSnapshot,
} from './campaigns.repo.js';
import { CONTENT_ADAPTERS } from './registry.js';

/** What the release publishes: the show, then the content (each once). */
export function itemsOf(draft: CampaignDraft): ContentRef[] {
  const seen = new Set<string>();
  const out: ContentRef[] = [];
  for (const r of [...(draft.show ? [draft.show] : []), ...draft.content]) {
    const k = `${r.type}:${r.id}`;
    if (!seen.has(k)) {
      seen.add(k);
      out.push({ type: r.type, id: r.id });
    }
  }
  return out;
}

export const targetsOfPlacement = (p: CampaignDraft['placements'][number]) => ({
  screenIds: p.targets.screenIds ?? [],
  groupIds: p.targets.groupIds ?? [],
  locationIds: p.targets.locationIds ?? [],
});

/** Screens, groups, locations the placements name that do not exist, as issues. */
export async function missingTargetRefs(db: Db, draft: CampaignDraft): Promise<Reference[]> {
  const refs: Reference[] = [];
  const tables = { screen: 'screens', group: 'screen_groups', location: 'locations' } as const;
  for (const [i, p] of draft.placements.entries()) {
    const t = targetsOfPlacement(p);
    for (const kind of ['screen', 'group', 'location'] as const) {
      for (const [j, id] of t[`${kind}Ids`].entries()) {
        if (!(await rowExists(db, tables[kind], id))) refs.push({ path: ['placements', i, 'targets', `${kind}Ids`, j], message: `no such ${kind} ${id}` });
      }
    }
  }
  return refs;
}

/** 400 when the draft names what does not exist or its window is backwards. */
export async function checkDraft(db: Db, draft: CampaignDraft): Promise<void> {
  if (draft.window && Date.parse(draft.window.endsAt) <= Date.parse(draft.window.startsAt))
    throw invalidField('window.endsAt', 'window.endsAt must be after window.startsAt');
  const refs: Reference[] = [];
  if (draft.show && (await missingContent(db, [draft.show])).length) refs.push({ path: ['show', 'id'], message: `no such ${draft.show.type}` });
  for (const [i, c] of draft.content.entries())
    if ((await missingContent(db, [c])).length) refs.push({ path: ['content', i, 'id'], message: `no such ${c.type}` });
  refs.push(...(await missingTargetRefs(db, draft)));
  if (refs.length)
    throw invalidReference(
      `Unknown references: ${refs
        .map((r) => r.message)
        .slice(0, 5)
        .join(', ')}`,
      refs,
    );
}

export async function createCampaign(db: Db, draft: CampaignDraft, by: string): Promise<string> {
  await checkDraft(db, draft);
  const id = newId();
  const t = nowIso();
  await insertCampaign(db, {
    id,
    name: draft.name,
    description: draft.description,
    draft: storableJson(draft, 'The campaign'),
    revision: 1,
    published_release_id: null,
    created_by: by,
    created_at: t,
    updated_at: t,
  });
  return id;
}

/** Replaces the draft while `row.revision` is current (else 412 when If-Match was sent, 409 otherwise). */
export async function writeDraft(db: Db, row: CampaignRow, draft: CampaignDraft, ifMatchSent = true): Promise<void> {
  const set = { name: draft.name, description: draft.description, draft: storableJson(draft, 'The campaign'), updated_at: nowIso() };
  if (!(await updateCampaignAtRevision(db, row, set)))
    throw new ApiError('version_conflict', 'This campaign was changed meanwhile. Reload and apply your change again.', { status: ifMatchSent ? 412 : 409 });
}

export async function publishedRelease(db: Db, row: CampaignRow): Promise<ReleaseRow | undefined> {
  if (!row.published_release_id) return undefined;
  return getReleaseRow(db, row.id, row.published_release_id);
}

export function unpublishedChanges(row: CampaignRow, release: ReleaseRow | undefined): boolean {
  if (!release) return true;
  return JSON.stringify(draftOfSnapshot(JSON.parse(release.snapshot) as ReleaseSnapshot)) !== JSON.stringify(draftOf(row));
}

export function releaseSummary(r: ReleaseRow) {
  return { id: r.id, number: r.number, publishedAt: r.published_at, publishedBy: r.published_by, note: r.note, source: r.source as PublicationSource };
}

/**
 * Releases `draft` as the campaign's next release, in the caller's transaction: publishes
 * the content with unpublished changes (source 'campaign'), replaces the campaign's owned
 * schedules by the placements, records the release. Any failure throws (the caller's
 * transaction rolls back: nothing published). Answers the release and what to announce.
 */
export async function releaseInTransaction(
  trx: Db,
  id: string,
  draft: CampaignDraft,
  by: string | null,
  note: string,
  source: PublicationSource,
): Promise<{ release: ReleaseRow; items: ContentRef[]; screens: string[] }> {
  const row = await getCampaignRow(trx, id);
  if (!draft.window) throw conflict('This campaign has no window: set window.startsAt and window.endsAt first');
  if (Date.parse(draft.window.endsAt) <= Date.now()) {
    throw conflict(`This campaign's window ended at ${draft.window.endsAt}: a release would play nowhere; move the window first`, { window: draft.window });
  }
  if (!draft.show) throw conflict('This campaign has no show: set what it plays first');
  const items = itemsOf(draft);
  const missing = await missingContent(trx, items);
  if (missing.length) throw conflict(`This campaign refers to what no longer exists: ${missing.join(', ')}`, { missing });
  const published: ReleasedItem[] = [];
  for (const item of items) {
    const adapter = CONTENT_ADAPTERS[item.type];
    const state = await adapter.state(trx, item.id);
    let pub = state.published;
    if (state.unpublishedChanges) {
      try {
        pub = await adapter.publish(trx, item.id, state.draft, by, note || `Campaign ${row.name}`, 'campaign');
      } catch (err) {
        if (err instanceof ApiError && err.code === 'conflict')
          throw conflict(`${item.type} "${state.name}" cannot be published: ${err.message}`, { item, ...(err.details as object) });
        throw err;
      }
    }
    published.push({ ...item, publicationId: pub?.id ?? null, number: pub?.number ?? null });
  }
  let screens: string[];
  try {
    screens = await replaceCampaignSchedules(trx, { id, name: row.name }, draft.window, draft.placements, by);
  } catch (err) {
    if (err instanceof ApiError && err.status === 400) throw conflict(`A placement cannot be scheduled: ${err.message}`, err.details);
    throw err;
  }
  const snapshot: ReleaseSnapshot = { ...draft, published };
  const release: ReleaseRow = {
    id: newId(),
    campaign_id: id,
    number: await nextReleaseNumber(trx, id),
    snapshot: storableJson(snapshot, 'The campaign release'),
    note,
    source,
    published_by: by,
    published_at: nowIso(),
  };
  await insertRelease(trx, release);
  return { release, items, screens };
}

/** After the commit: every adapter's screens, and the campaign's. */
export async function announceRelease(deps: AppDeps, id: string, items: readonly ContentRef[], screens: readonly string[]): Promise<void> {
  for (const item of items) await CONTENT_ADAPTERS[item.type].announce(deps, item.id);
  await contentChanged(deps, [{ kind: 'campaign', id }], screens);
}

/** POST /campaigns/{id}/publish: the draft as the next release (409 while approvals are on). */
export async function publishCampaign(deps: AppDeps, id: string, note: string, by: string): Promise<ReleaseRow> {
  if (await approvalsRequired(deps.db)) throw submitInstead('campaign', id);
  const result = await deps.db.transaction().execute(async (trx) => {
    const row = await getCampaignRow(trx, id);
    return releaseInTransaction(trx, id, draftOf(row), by, note, 'edit');
  });
  await announceRelease(deps, id, result.items, result.screens);
  return result.release;
}

/** Deletes the campaign, its releases and every schedule showing it; tells the screens. */
export async function deleteCampaign(deps: AppDeps, row: CampaignRow, role: Role): Promise<void> {
  if (row.published_release_id && (await approvalsRequired(deps.db)) && !roleAtLeast(role, 'publisher'))
    throw publisherNeededToDelete(`Campaign "${row.name}"`);
  const screens = await deps.db.transaction().execute(async (trx) => {
    const s = await deleteCampaignSchedules(trx, row.id);
    if (!(await deleteCampaignAtRevision(trx, row)))
      throw new ApiError('version_conflict', 'This campaign was changed meanwhile. Reload and decide again.', { status: 412 });
    await forgetContent(deps, trx, 'campaign', row.id, row.name);
    return s;
  });
  await contentChanged(deps, [{ kind: 'campaign', id: row.id }], screens);
}
