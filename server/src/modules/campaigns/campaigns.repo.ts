/** The campaigns and campaign_releases tables (migration 0390): plain functions taking `db` or a transaction. */
import type { Db } from '../../platform/db/database.js';
import type { CampaignReleasesTable, CampaignsTable } from '../../platform/db/schema.js';
import { notFound } from '../../platform/http/errors.js';
import { afterCursor } from '../../platform/http/pagination.js';

export type CampaignRow = CampaignsTable;
export type ReleaseRow = CampaignReleasesTable;

export type ContentType = 'playlist' | 'layout' | 'widget';
export interface ContentRef {
  type: ContentType;
  id: string;
}
export interface Placement {
  name?: string | undefined;
  targets: { screenIds?: string[] | undefined; groupIds?: string[] | undefined; locationIds?: string[] | undefined };
  priority: number;
  rrule?: string | null | undefined;
  timeZone?: string | null | undefined;
}
/** What the editor edits; a release's snapshot is this plus `published`. */
export interface CampaignDraft {
  name: string;
  description: string;
  window: { startsAt: string; endsAt: string } | null;
  show: { type: 'playlist' | 'layout'; id: string } | null;
  content: ContentRef[];
  placements: Placement[];
}
export interface ReleasedItem {
  type: ContentType;
  id: string;
  /** The item's publication screens play after the release (null only if it has none). */
  publicationId: string | null;
  number: number | null;
}
export type ReleaseSnapshot = CampaignDraft & { published: ReleasedItem[] };

export function draftOf(row: Pick<CampaignRow, 'draft'>): CampaignDraft {
  return JSON.parse(row.draft) as CampaignDraft;
}

/** The draft part of a release snapshot (what restore gives back, what unpublishedChanges compares). */
export function draftOfSnapshot(s: ReleaseSnapshot): CampaignDraft {
  return { name: s.name, description: s.description, window: s.window, show: s.show, content: s.content, placements: s.placements };
}

export async function findCampaignRow(db: Db, id: string): Promise<CampaignRow | undefined> {
  return db.selectFrom('campaigns').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function getCampaignRow(db: Db, id: string): Promise<CampaignRow> {
  const row = await findCampaignRow(db, id);
  if (!row) throw notFound('Campaign');
  return row;
}

export async function listCampaignRows(db: Db, cursor: string | undefined, limit: number): Promise<CampaignRow[]> {
  return db
    .selectFrom('campaigns')
    .selectAll()
    .where(afterCursor('name', 'id', 'asc', cursor))
    .orderBy('name')
    .orderBy('id')
    .limit(limit + 1)
    .execute();
}

export async function getReleaseRow(db: Db, campaignId: string, releaseId: string): Promise<ReleaseRow | undefined> {
  return db.selectFrom('campaign_releases').selectAll().where('id', '=', releaseId).where('campaign_id', '=', campaignId).executeTakeFirst();
}

export async function listReleaseRows(db: Db, campaignId: string, cursor: string | undefined, limit: number): Promise<ReleaseRow[]> {
  return db
    .selectFrom('campaign_releases')
    .selectAll()
    .where('campaign_id', '=', campaignId)
    .where(afterCursor('number', 'id', 'desc', cursor))
    .orderBy('number', 'desc')
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
}

export async function nextReleaseNumber(db: Db, campaignId: string): Promise<number> {
  const r = await db
    .selectFrom('campaign_releases')
    .select((eb) => eb.fn.max<number>('number').as('n'))
    .where('campaign_id', '=', campaignId)
    .executeTakeFirst();
  return Number(r?.n ?? 0) + 1;
}

const TABLES = { playlist: 'playlists', layout: 'layouts', widget: 'widgets' } as const;

/** The refs that do not exist, as "type id". */
export async function missingContent(db: Db, refs: readonly ContentRef[]): Promise<string[]> {
  const missing: string[] = [];
  for (const r of refs) {
    const found = await db.selectFrom(TABLES[r.type]).select('id').where('id', '=', r.id).executeTakeFirst();
    if (!found) missing.push(`${r.type} ${r.id}`);
  }
  return missing;
}

/** Whether a screen, group or location exists. */
export async function rowExists(db: Db, table: 'screens' | 'screen_groups' | 'locations', id: string): Promise<boolean> {
  return Boolean(await db.selectFrom(table).select('id').where('id', '=', id).executeTakeFirst());
}

export async function insertCampaign(db: Db, row: CampaignRow): Promise<void> {
  await db.insertInto('campaigns').values(row).execute();
}

/** Writes `set` and the next revision only while `row.revision` is current: false when another change won. */
export async function updateCampaignAtRevision(db: Db, row: CampaignRow, set: Partial<CampaignRow>): Promise<boolean> {
  const res = await db
    .updateTable('campaigns')
    .set({ ...set, revision: row.revision + 1 })
    .where('id', '=', row.id)
    .where('revision', '=', row.revision)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

export async function deleteCampaignAtRevision(db: Db, row: CampaignRow): Promise<boolean> {
  const res = await db.deleteFrom('campaigns').where('id', '=', row.id).where('revision', '=', row.revision).executeTakeFirst();
  return Number(res.numDeletedRows) === 1;
}

/** Records the release and makes it the one screens play. */
export async function insertRelease(db: Db, release: ReleaseRow): Promise<void> {
  await db.insertInto('campaign_releases').values(release).execute();
  await db.updateTable('campaigns').set({ published_release_id: release.id, updated_at: release.published_at }).where('id', '=', release.campaign_id).execute();
}

// Preflight's reads.

/** The assets of the playlists' items and the given assets: state and size, and the playlist they came through. */
export async function mediaOf(db: Db, playlistIds: readonly string[], assetIds: readonly string[]) {
  const viaPlaylists = playlistIds.length
    ? await db
        .selectFrom('playlist_items as i')
        .innerJoin('assets as a', 'a.id', 'i.asset_id')
        .select(['a.id', 'a.name', 'a.state', 'a.size_bytes', 'i.playlist_id'])
        .where('i.playlist_id', 'in', [...playlistIds])
        .execute()
    : [];
  const direct = assetIds.length
    ? (
        await db
          .selectFrom('assets')
          .select(['id', 'name', 'state', 'size_bytes'])
          .where('id', 'in', [...assetIds])
          .execute()
      ).map((a) => ({
        ...a,
        playlist_id: null,
      }))
    : [];
  return [...viaPlaylists, ...direct];
}

/** The screens' names, when they were last seen and their last status documents (JSON text or null). */
export async function screensStatus(db: Db, screenIds: readonly string[]) {
  return db
    .selectFrom('screens')
    .select(['id', 'name', 'last_seen_at', 'last_seen_ms', 'last_status'])
    .where('id', 'in', [...screenIds])
    .orderBy('name')
    .execute();
}

/**
 * Enabled, published schedules (not this campaign's) of a priority above `priority` that
 * start before the window ends, with their targets; the caller works out the screens and
 * whether an occurrence falls in the window.
 */
export async function strongerScheduleCandidates(db: Db, campaignId: string, priority: number, windowEndsAt: string) {
  const rows = await db
    .selectFrom('schedules')
    .selectAll()
    .where('enabled', '=', 1)
    .where('published_at', 'is not', null)
    .where((eb) => eb.or([eb('campaign_id', 'is', null), eb('campaign_id', '!=', campaignId)]))
    .where('priority', '>', priority)
    .where('starts_at', '<', windowEndsAt)
    .execute();
  if (!rows.length) return [];
  const targets = await db
    .selectFrom('schedule_targets')
    .selectAll()
    .where(
      'schedule_id',
      'in',
      rows.map((r) => r.id),
    )
    .execute();
  return rows.map((row) => {
    const of = (kind: 'screen' | 'group' | 'location') => targets.filter((t) => t.schedule_id === row.id && t.target_type === kind).map((t) => t.target_id);
    return { row, targets: { screenIds: of('screen'), groupIds: of('group'), locationIds: of('location') } };
  });
}

/** Of the draft items, those with an approved or scheduled submission of their draft, at the revision it was made from. */
export async function approvedDraftRevisions(db: Db, refs: readonly ContentRef[]): Promise<Map<string, number>> {
  if (!refs.length) return new Map();
  const rows = await db
    .selectFrom('content_submissions')
    .select(['content_type', 'content_id', 'draft_revision'])
    .where('kind', '=', 'draft')
    .where('state', 'in', ['approved', 'scheduled'])
    .where(
      'content_id',
      'in',
      refs.map((r) => r.id),
    )
    .execute();
  return new Map(rows.map((r) => [`${r.content_type}:${r.content_id}`, r.draft_revision]));
}
