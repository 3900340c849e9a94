/**
 * Playlists' side of the publication workflow (platform/publications.ts, issue 20): the draft
 * is the live `playlists` / `playlist_items` rows (what the API edits); publications are rows
 * of `content_publications` (type 'playlist') and `playlists.published_publication_id` names
 * the one screens play (ContentLoader reads it). With approvals off every write publishes its
 * result at once (`afterPlaylistWrite`); with approvals on writes change the draft only.
 */
import type { AppDeps } from '../../platform/app-deps.js';
import type { Db } from '../../platform/db/database.js';
import { storableJson } from '../../platform/db/json.js';
import { ApiError } from '../../platform/http/errors.js';
import {
  getPublication,
  insertPublication,
  listPublications,
  publicationSummary,
  type Comparable,
  type PublicationSource,
  type PublicationSummary,
  type Publishable,
} from '../../platform/publications.js';
import { approvalsRequired } from '../system/index.js';
import { existingWidgetIds } from '../widgets/index.js';
import { contentChanged } from './changes.js';
import { now, parseJson } from './common.js';
import type { Daypart } from './plan.js';
import { assertNestable, getPlaylistRow, itemsOf, tagRuleOf, type ItemRow, type PlaylistRow } from './playlists.repo.js';
import type { TagRule } from './playlists.schemas.js';
import { assetInfos } from './refs.repo.js';
import {
  currentPublicationRow,
  deleteAllItems,
  existingPlaylistIds,
  insertItemRows,
  publishedSnapshotRow,
  publishedSnapshotRows,
  restorePlaylistFields,
  setPublishedPublication,
} from './playlist-publications.repo.js';

/** One item as a publication keeps it (the item id kept, so compare can match items). */
export interface PlaylistSnapshotItem {
  id: string;
  assetId: string | null;
  widgetId: string | null;
  playlistId: string | null;
  durationMs: number | null;
  transition: { type: string; durationMs: number };
  validFrom: string | null;
  validUntil: string | null;
  dayparts: Daypart[];
  enabled: boolean;
}

/** A playlist's publication: what screens play. Migration 0365 builds the same shape in SQL. */
export interface PlaylistSnapshot {
  name: string;
  description: string;
  tagRule: TagRule | null;
  /** In position order. */
  items: PlaylistSnapshotItem[];
}

/** The snapshot of a playlist's rows (the one function that builds it; key order matters for comparing). */
export function playlistSnapshot(row: Pick<PlaylistRow, 'name' | 'description' | 'tag_rule'>, items: readonly ItemRow[]): PlaylistSnapshot {
  return {
    name: row.name,
    description: row.description,
    tagRule: tagRuleOf(row),
    items: items.map((r) => ({
      id: r.id,
      assetId: r.asset_id,
      widgetId: r.widget_id,
      playlistId: r.child_playlist_id,
      durationMs: r.duration_ms,
      transition: { type: r.transition_type, durationMs: r.transition_ms },
      validFrom: r.valid_from,
      validUntil: r.valid_until,
      dayparts: parseJson<Daypart[]>(r.dayparts, []),
      enabled: r.enabled === 1,
    })),
  };
}

/** The draft of a playlist: its row and the snapshot of its live rows (404 when it does not exist). */
export async function playlistDraft(db: Db, id: string): Promise<{ row: PlaylistRow; snapshot: PlaylistSnapshot }> {
  const row = await getPlaylistRow(db, id);
  return { row, snapshot: playlistSnapshot(row, await itemsOf(db, id)) };
}

const currentPublication = currentPublicationRow;

/** Whether two snapshots are the same (as JSON: a stored snapshot is compared parsed, so its spacing does not count). */
function sameSnapshot(a: unknown, storedB: string | undefined): boolean {
  return storedB !== undefined && JSON.stringify(a) === JSON.stringify(JSON.parse(storedB));
}

/** The publication state the playlist DTO answers: `publication` (what screens play) and `unpublishedChanges`. */
export async function publicationStateOf(
  db: Db,
  id: string,
): Promise<{ publication: Pick<PublicationSummary, 'id' | 'number' | 'publishedAt' | 'publishedBy'> | null; unpublishedChanges: boolean }> {
  const row = await getPlaylistRow(db, id);
  const pub = await currentPublication(db, row);
  if (!pub) return { publication: null, unpublishedChanges: true };
  return {
    publication: { id: pub.id, number: pub.number, publishedAt: pub.published_at, publishedBy: pub.published_by },
    unpublishedChanges: !sameSnapshot(playlistSnapshot(row, await itemsOf(db, id)), pub.snapshot),
  };
}

/** What a snapshot refers to that no longer exists ("asset <id>", "widget <id>", "playlist <id>"). */
export async function missingPlaylistRefs(db: Db, snapshot: PlaylistSnapshot): Promise<string[]> {
  const assets = [...new Set(snapshot.items.flatMap((i) => (i.assetId ? [i.assetId] : [])))];
  const widgets = [...new Set(snapshot.items.flatMap((i) => (i.widgetId ? [i.widgetId] : [])))];
  const playlists = [...new Set(snapshot.items.flatMap((i) => (i.playlistId ? [i.playlistId] : [])))];
  const haveAssets = await assetInfos(db, assets);
  const haveWidgets = widgets.length ? await existingWidgetIds(db, widgets) : new Set<string>();
  const havePlaylists = await existingPlaylistIds(db, playlists);
  return [
    ...assets.filter((x) => !haveAssets.has(x)).map((x) => `asset ${x}`),
    ...widgets.filter((x) => !haveWidgets.has(x)).map((x) => `widget ${x}`),
    ...playlists.filter((x) => !havePlaylists.has(x)).map((x) => `playlist ${x}`),
  ];
}

async function refusingMissing(db: Db, snapshot: PlaylistSnapshot, what: string): Promise<void> {
  const missing = await missingPlaylistRefs(db, snapshot);
  if (missing.length) throw new ApiError('conflict', `${what} refers to what no longer exists: ${missing.join(', ')}`, { details: { missing } });
}

/** Stores `snapshot` as the playlist's next publication and points the playlist at it (no checks). */
async function storePublication(trx: Db, id: string, snapshot: PlaylistSnapshot, by: string | null, note: string, source: PublicationSource) {
  const summary = await insertPublication(trx, { type: 'playlist', contentId: id, snapshot, note, source, by });
  await setPublishedPublication(trx, id, summary.id);
  return summary;
}

/**
 * Call at the end of every playlist write's transaction: with approvals off the draft is
 * published at once (source 'edit', by the caller), so screens see the change as before
 * issue 20; with approvals on nothing (the draft waits for a submission). Not refused for
 * a missing reference: an edit never was, and the player skips what is gone. A write that
 * leaves the snapshot as published makes none.
 */
export async function afterPlaylistWrite(trx: Db, id: string, by: string | null): Promise<void> {
  if (await approvalsRequired(trx)) return;
  const { row, snapshot } = await playlistDraft(trx, id);
  // A write that changed nothing screens play (an empty PATCH) makes no publication.
  if (sameSnapshot(snapshot, (await currentPublication(trx, row))?.snapshot)) return;
  await storePublication(trx, id, snapshot, by, '', 'edit');
}

/**
 * What screens play of a playlist: its published snapshot; null when it was never
 * published (plays nothing); undefined when the playlist does not exist.
 */
export async function publishedPlaylist(db: Db, id: string): Promise<PlaylistSnapshot | null | undefined> {
  const row = await publishedSnapshotRow(db, id);
  if (!row) return undefined;
  return row.snapshot ? (JSON.parse(row.snapshot) as PlaylistSnapshot) : null;
}

/** `publishedPlaylist` for many playlists in one query: ids missing from the answer name no playlist. */
export async function publishedPlaylists(db: Db, ids: readonly string[]): Promise<Map<string, PlaylistSnapshot | null>> {
  const out = new Map<string, PlaylistSnapshot | null>();
  if (ids.length === 0) return out;
  for (const [id, snapshot] of await publishedSnapshotRows(db, ids)) out.set(id, snapshot ? (JSON.parse(snapshot) as PlaylistSnapshot) : null);
  return out;
}

function asSnapshot(snapshot: unknown): PlaylistSnapshot {
  const s = snapshot as PlaylistSnapshot | null;
  if (!s || typeof s !== 'object' || typeof s.name !== 'string' || !Array.isArray(s.items))
    throw new ApiError('validation_failed', 'That is not a playlist snapshot');
  return s;
}

export const playlistPublishable: Publishable = {
  type: 'playlist',

  async state(db, id) {
    const { row, snapshot } = await playlistDraft(db, id);
    const pub = await currentPublication(db, row);
    return {
      name: row.name,
      revision: row.revision,
      draft: snapshot,
      published: pub ? publicationSummary(pub) : null,
      unpublishedChanges: !pub || !sameSnapshot(snapshot, pub.snapshot),
    };
  },

  async publish(trx, id, snapshot, by, note, source) {
    await getPlaylistRow(trx, id);
    const s = asSnapshot(snapshot);
    await refusingMissing(trx, s, 'This playlist');
    return storePublication(trx, id, s, by, note, source);
  },

  announce: (deps: AppDeps, id: string) => contentChanged(deps, [{ kind: 'playlist', id }]),

  async publications(db, id, page) {
    await getPlaylistRow(db, id);
    return listPublications(db, 'playlist', id, page);
  },

  publication: (db, id, publicationId) => getPublication(db, 'playlist', id, publicationId),

  async restoreDraft(trx, id, snapshot) {
    const row = await getPlaylistRow(trx, id);
    const s = asSnapshot(snapshot);
    await refusingMissing(trx, s, 'That publication');
    const before = new Map((await itemsOf(trx, id)).map((r) => [r.id, r]));
    await deleteAllItems(trx, id);
    // Nesting is checked against the playlists as they are now (a cycle may have formed since).
    for (const child of new Set(s.items.flatMap((i) => (i.playlistId ? [i.playlistId] : [])))) await assertNestable(trx, id, child);
    const t = now();
    await insertItemRows(
      trx,
      s.items.map((i, position) => ({
        id: i.id,
        playlist_id: id,
        position,
        asset_id: i.assetId,
        widget_id: i.widgetId,
        child_playlist_id: i.playlistId,
        duration_ms: i.durationMs,
        transition_type: i.transition.type,
        transition_ms: i.transition.durationMs,
        valid_from: i.validFrom,
        valid_until: i.validUntil,
        dayparts: storableJson(i.dayparts ?? [], 'dayparts'),
        enabled: i.enabled ? 1 : 0,
        created_at: before.get(i.id)?.created_at ?? t,
        updated_at: t,
      })),
    );
    await restorePlaylistFields(trx, id, row.revision, {
      name: s.name,
      description: s.description,
      tag_rule: s.tagRule?.tags.length ? storableJson(s.tagRule, 'tagRule') : null,
      updated_at: t,
    });
  },

  comparable(snapshot): Comparable {
    const s = asSnapshot(snapshot);
    return {
      fields: { name: s.name, description: s.description, tagRule: s.tagRule },
      items: s.items.map((i) => {
        const { id, ...fields } = i;
        const type = i.assetId ? 'asset' : i.widgetId ? 'widget' : 'playlist';
        return { key: id, label: `${type} ${i.assetId ?? i.widgetId ?? i.playlistId}`, fields };
      }),
    };
  },
};
