import { sql } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import type { Db } from '../../platform/db/database.js';
import { dialectOf, sqlText } from '../../platform/db/dialect.js';
import type { PlaylistItemsTable, PlaylistsTable } from '../../platform/db/schema.js';
import { ApiError, notFound } from '../../platform/http/errors.js';
import { afterCursor } from '../../platform/http/pagination.js';
import { storableJson } from '../../platform/db/json.js';
import { now, parseJson, type Usage } from './common.js';
import { MAX_NESTING, nestingDepth, wouldCycle, type Daypart } from './plan.js';
import { assetsWithTags, effectiveDuration } from './refs.js';
import { assetInfos, type AssetInfo, type WidgetInfo, widgetInfos } from './refs.repo.js';
import { widgetDuration } from './refs.js';
import { schedulesShowing } from '../schedules/index.js';
import { publishedPlaylistsWith } from './playlist-publications.repo.js';
import type { ItemDto, ItemPatch, NewItem, PlaylistDto, TagRule, TRANSITIONS } from './playlists.schemas.js';

export type PlaylistRow = PlaylistsTable;
export type ItemRow = PlaylistItemsTable;

export async function getPlaylistRow(db: Db, id: string): Promise<PlaylistRow> {
  const row = await db.selectFrom('playlists').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('Playlist');
  return row;
}

export function itemsOf(db: Db, playlistId: string): Promise<ItemRow[]> {
  return db.selectFrom('playlist_items').selectAll().where('playlist_id', '=', playlistId).orderBy('position').orderBy('id').execute();
}

/** A playlist's name and tag rule, as a plan reads it. */
export function planPlaylistRow(db: Db, id: string) {
  return db.selectFrom('playlists').select(['id', 'name', 'tag_rule']).where('id', '=', id).executeTakeFirst();
}

/** A playlist's enabled items' asset and nested playlist, in order. */
export function enabledItemRefs(db: Db, playlistId: string) {
  return db
    .selectFrom('playlist_items')
    .select(['asset_id', 'child_playlist_id'])
    .where('playlist_id', '=', playlistId)
    .where('enabled', '=', 1)
    .orderBy('position')
    .execute();
}

/** The playlists that hold any of the assets as an item, in the draft or in what screens play (one row per asset and playlist). */
export async function playlistsWithAssets(db: Db, assetIds: readonly string[]) {
  const draft = await db
    .selectFrom('playlist_items as i')
    .innerJoin('playlists as p', 'p.id', 'i.playlist_id')
    .select(['i.asset_id', 'p.id', 'p.name'])
    .where('i.asset_id', 'in', [...assetIds])
    .distinct()
    .execute();
  const published = (await publishedPlaylistsWith(db, 'assetId', assetIds)).map((r) => ({ asset_id: r.ref as string | null, id: r.id, name: r.name }));
  return uniqueBy([...draft, ...published], (r) => `${r.asset_id}|${r.id}`);
}

/** The playlists that hold any of the widgets as an item, in the draft or in what screens play (one row per widget and playlist). */
export async function playlistsWithWidgets(db: Db, widgetIds: readonly string[]) {
  const draft = await db
    .selectFrom('playlist_items as i')
    .innerJoin('playlists as p', 'p.id', 'i.playlist_id')
    .select(['i.widget_id', 'p.id', 'p.name'])
    .where('i.widget_id', 'in', [...widgetIds])
    .distinct()
    .execute();
  const published = (await publishedPlaylistsWith(db, 'widgetId', widgetIds)).map((r) => ({ widget_id: r.ref as string | null, id: r.id, name: r.name }));
  return uniqueBy([...draft, ...published], (r) => `${r.widget_id}|${r.id}`);
}

function uniqueBy<T>(rows: readonly T[], key: (r: T) => string): T[] {
  const seen = new Map<string, T>();
  for (const r of rows) if (!seen.has(key(r))) seen.set(key(r), r);
  return [...seen.values()];
}

export function tagRuleOf(row: Pick<PlaylistRow, 'tag_rule'>): TagRule | null {
  return parseJson<TagRule | null>(row.tag_rule, null);
}

export function itemType(row: ItemRow): 'asset' | 'widget' | 'playlist' {
  return row.asset_id ? 'asset' : row.widget_id ? 'widget' : 'playlist';
}

function toItemDto(
  row: ItemRow,
  assets: Map<string, AssetInfo>,
  widgets: Map<string, WidgetInfo>,
  playlistNames: Map<string, string>,
  nestedDurations: Map<string, number>,
): ItemDto {
  const asset = row.asset_id ? assets.get(row.asset_id) : undefined;
  const widget = row.widget_id ? widgets.get(row.widget_id) : undefined;
  const type = itemType(row);
  const nested = row.child_playlist_id ? nestedDurations.get(row.child_playlist_id) : undefined;
  return {
    id: row.id,
    position: row.position,
    type,
    assetId: row.asset_id,
    widgetId: row.widget_id,
    playlistId: row.child_playlist_id,
    label: asset?.name ?? widget?.name ?? (row.child_playlist_id ? (playlistNames.get(row.child_playlist_id) ?? null) : null),
    assetKind: asset?.kind ?? null,
    assetState: row.asset_id ? (asset?.state ?? 'missing') : null,
    // A nested playlist plays its own items for their own durations (one pass).
    durationMs: type === 'playlist' ? null : row.duration_ms,
    effectiveDurationMs:
      type === 'playlist' ? (nested ?? 0) : type === 'widget' ? widgetDuration(row.duration_ms, widget) : effectiveDuration(row.duration_ms, asset),
    transition: { type: row.transition_type as (typeof TRANSITIONS)[number], durationMs: row.transition_ms },
    validFrom: row.valid_from,
    validUntil: row.valid_until,
    dayparts: parseJson<Daypart[]>(row.dayparts, []),
    enabled: row.enabled === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * The assets a tag rule plays, in its order, at most `limit`: ready assets carrying the
 * tags. The manifest and the playlist's length both use this.
 */
export async function tagRuleAssets(db: Db, rule: TagRule | null): Promise<AssetInfo[]> {
  if (!rule || rule.tags.length === 0) return [];
  const matches = await assetsWithTags(db, rule.tags, rule.match);
  matches.sort((a, b) =>
    rule.order === 'name'
      ? a.name.localeCompare(b.name) || a.id.localeCompare(b.id)
      : rule.order === 'newest'
        ? b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id)
        : a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id),
  );
  return rule.limit ? matches.slice(0, rule.limit) : matches;
}

/** How long one pass of a tag rule's current matches plays. */
async function tagRuleDuration(db: Db, row: Pick<PlaylistRow, 'tag_rule'>): Promise<number> {
  const rule = tagRuleOf(row);
  return (await tagRuleAssets(db, rule)).reduce((sum, a) => sum + effectiveDuration(rule!.durationMs, a), 0);
}

/**
 * One pass of a playlist: its enabled items (a nested playlist counts its own pass) and
 * its tag rule's current matches; cycle-safe.
 */
async function durationOf(db: Db, id: string, seen: Set<string> = new Set()): Promise<number> {
  if (seen.has(id) || seen.size > MAX_NESTING) return 0;
  seen.add(id);
  const row = await db.selectFrom('playlists').select('tag_rule').where('id', '=', id).executeTakeFirst();
  if (!row) return 0;
  const rows = (await itemsOf(db, id)).filter((r) => r.enabled === 1);
  const assets = await assetInfos(
    db,
    rows.flatMap((r) => (r.asset_id ? [r.asset_id] : [])),
  );
  const widgets = await widgetInfos(
    db,
    rows.flatMap((r) => (r.widget_id ? [r.widget_id] : [])),
  );
  let sum = await tagRuleDuration(db, row);
  for (const r of rows) {
    if (r.child_playlist_id) sum += await durationOf(db, r.child_playlist_id, new Set(seen));
    else if (r.widget_id) sum += widgetDuration(r.duration_ms, widgets.get(r.widget_id));
    else sum += effectiveDuration(r.duration_ms, r.asset_id ? assets.get(r.asset_id) : undefined);
  }
  return sum;
}

export async function itemDtos(db: Db, rows: readonly ItemRow[]): Promise<ItemDto[]> {
  const assets = await assetInfos(
    db,
    rows.flatMap((r) => (r.asset_id ? [r.asset_id] : [])),
  );
  const widgets = await widgetInfos(
    db,
    rows.flatMap((r) => (r.widget_id ? [r.widget_id] : [])),
  );
  const childIds = [...new Set(rows.flatMap((r) => (r.child_playlist_id ? [r.child_playlist_id] : [])))];
  const names = new Map<string, string>();
  const durations = new Map<string, number>();
  if (childIds.length) {
    for (const p of await db.selectFrom('playlists').select(['id', 'name']).where('id', 'in', childIds).execute()) names.set(p.id, p.name);
    for (const c of childIds) durations.set(c, await durationOf(db, c));
  }
  return rows.map((r) => toItemDto(r, assets, widgets, names, durations));
}

export function toSummary(row: PlaylistRow, itemCount: number) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    revision: row.revision,
    tagRule: tagRuleOf(row),
    itemCount,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export async function playlistDto(db: Db, id: string): Promise<Omit<PlaylistDto, 'publication' | 'unpublishedChanges'>> {
  const row = await getPlaylistRow(db, id);
  const items = await itemDtos(db, await itemsOf(db, id));
  const durationMs = items.filter((i) => i.enabled).reduce((s, i) => s + i.effectiveDurationMs, 0) + (await tagRuleDuration(db, row));
  return { ...toSummary(row, items.length), items, durationMs };
}

/**
 * Marks a change: a new revision and updated_at. Call inside the change's transaction
 * with the revision read (and checked against If-Match) in that same transaction: the
 * update only applies while it is still current, else 412 and the transaction rolls back.
 */
export async function touchPlaylist(db: Db, id: string, expected: number): Promise<number> {
  const row = await db
    .updateTable('playlists')
    .set((eb) => ({ revision: eb('revision', '+', 1), updated_at: now() }))
    .where('id', '=', id)
    .where('revision', '=', expected)
    .returning('revision')
    .executeTakeFirst();
  if (!row) throw staleRevision(await db.selectFrom('playlists').select('revision').where('id', '=', id).executeTakeFirst());
  return row.revision;
}

function staleRevision(current: { revision: number } | undefined): ApiError {
  if (!current) return notFound('Playlist');
  return new ApiError('version_conflict', `This was changed meanwhile: revision ${current.revision} is current. Reload and apply your change again.`, {
    details: { currentRevision: current.revision },
  });
}

/** Nested playlists of each playlist, for cycle and depth checks. */
export async function nestingGraph(db: Db): Promise<(id: string) => string[]> {
  const rows = await db.selectFrom('playlist_items').select(['playlist_id', 'child_playlist_id']).where('child_playlist_id', 'is not', null).execute();
  const graph = new Map<string, string[]>();
  for (const r of rows) {
    const list = graph.get(r.playlist_id) ?? [];
    list.push(r.child_playlist_id!);
    graph.set(r.playlist_id, list);
  }
  return (id) => graph.get(id) ?? [];
}

/** 409 when nesting `childId` into `parentId` would make a cycle or nest too deep. */
export async function assertNestable(db: Db, parentId: string, childId: string): Promise<void> {
  const childrenOf = await nestingGraph(db);
  if (wouldCycle(parentId, childId, childrenOf)) {
    throw new ApiError(
      'conflict',
      parentId === childId
        ? 'A playlist cannot contain itself'
        : 'That playlist already contains this one (directly or through others): nesting it here would make a cycle',
      {
        details: { cycle: true },
      },
    );
  }
  // Depth of the parent's ancestors plus the child's own depth.
  const parentsOf = new Map<string, string[]>();
  const rows = await db.selectFrom('playlist_items').select(['playlist_id', 'child_playlist_id']).where('child_playlist_id', 'is not', null).execute();
  for (const r of rows) parentsOf.set(r.child_playlist_id!, [...(parentsOf.get(r.child_playlist_id!) ?? []), r.playlist_id]);
  const up = nestingDepth(parentId, (id) => parentsOf.get(id) ?? []);
  const down = nestingDepth(childId, childrenOf);
  if (up + down > MAX_NESTING) throw new ApiError('conflict', `Playlists may nest at most ${MAX_NESTING} levels deep; this would make ${up + down}`);
}

/** Everything that uses a playlist: parent playlists, layouts, schedules, assignments. */
export async function playlistUsage(db: Db, id: string): Promise<Usage[]> {
  const draftParents = await db
    .selectFrom('playlist_items as i')
    .innerJoin('playlists as p', 'p.id', 'i.playlist_id')
    .select(['p.id', 'p.name'])
    .where('i.child_playlist_id', '=', id)
    .distinct()
    .execute();
  // A parent whose publication nests it plays it too (even when the parent's draft dropped it).
  const parents = uniqueBy([...draftParents, ...(await publishedPlaylistsWith(db, 'playlistId', [id]))], (p) => p.id).map((p) => ({ id: p.id, name: p.name }));
  const layouts = await layoutsReferencing(db, 'playlistId', id);
  const schedules = await schedulesShowing(db, 'playlist', id);
  // Assignments of screens or groups deleted since do not count (they no longer play).
  const assignments = await db
    .selectFrom('playlist_assignments as a')
    .select(['a.target_type', 'a.target_id'])
    .where('a.playlist_id', '=', id)
    .where((eb) =>
      eb.or([
        eb.and([eb('a.target_type', '=', 'screen'), eb.exists(eb.selectFrom('screens').select('screens.id').whereRef('screens.id', '=', 'a.target_id'))]),
        eb.and([
          eb('a.target_type', '=', 'group'),
          eb.exists(eb.selectFrom('screen_groups').select('screen_groups.id').whereRef('screen_groups.id', '=', 'a.target_id')),
        ]),
      ]),
    )
    .execute();
  return [
    ...parents.map((p) => ({ type: 'playlist' as const, id: p.id, name: p.name })),
    ...layouts,
    ...schedules.map((s) => ({ type: 'schedule' as const, id: s.id, name: s.name })),
    ...(await Promise.all(
      assignments.map(async (a) => {
        const named =
          a.target_type === 'screen'
            ? await db.selectFrom('screens').select('name').where('id', '=', a.target_id).executeTakeFirst()
            : await db.selectFrom('screen_groups').select('name').where('id', '=', a.target_id).executeTakeFirst();
        return {
          type: a.target_type === 'screen' ? ('screen-assignment' as const) : ('group-assignment' as const),
          id: a.target_id,
          name: named?.name ?? null,
        };
      }),
    )),
  ];
}

/** Layouts whose draft or published revision has a zone showing `field` = `id`. */
export async function layoutsReferencing(db: Db, field: 'playlistId' | 'assetId' | 'sourceId' | 'widgetId', id: string): Promise<Usage[]> {
  const d = dialectOf(db);
  const zoneRef = sql.raw(sqlText.jsonValue(d, 'z.value', `$.content.${field}`));
  const zonesOf = (doc: string) => sql.raw(sqlText.jsonArrayItems(d, doc, '$.zones', 'z'));
  const background = (doc: string) => sql.raw(sqlText.jsonValue(d, doc, '$.background.assetId'));
  const rows = await sql<{ id: string; name: string }>`
    select distinct l.id, l.name from layouts l
    left join layout_revisions r on r.id = l.published_revision_id
    where exists (select 1 from ${zonesOf('l.draft')} where ${zoneRef} = ${id})
       or exists (select 1 from ${zonesOf('r.content')} where ${zoneRef} = ${id})
       ${field === 'assetId' ? sql`or ${background('l.draft')} = ${id} or ${background('r.content')} = ${id}` : sql``}`.execute(db);
  return rows.rows.map((r) => ({ type: 'layout' as const, id: r.id, name: r.name }));
}

/** Rows for new items (positions set by the caller). */
export function newItemRow(playlistId: string, item: NewItem, position: number): ItemRow {
  const t = now();
  return {
    id: uuidv7(),
    playlist_id: playlistId,
    position,
    asset_id: item.assetId ?? null,
    widget_id: item.widgetId ?? null,
    child_playlist_id: item.playlistId ?? null,
    duration_ms: item.durationMs ?? null,
    transition_type: item.transition?.type ?? 'none',
    transition_ms: item.transition?.durationMs ?? 0,
    valid_from: item.validFrom ?? null,
    valid_until: item.validUntil ?? null,
    dayparts: storableJson(item.dayparts ?? [], 'dayparts'),
    enabled: item.enabled === false ? 0 : 1,
    created_at: t,
    updated_at: t,
  };
}

/** Column changes for an item patch (undefined fields stay). */
export function itemChanges(patch: ItemPatch): Partial<ItemRow> {
  const set: Partial<ItemRow> = {};
  if (patch.durationMs !== undefined) set.duration_ms = patch.durationMs;
  if (patch.transition !== undefined) {
    set.transition_type = patch.transition.type;
    set.transition_ms = patch.transition.durationMs;
  }
  if (patch.validFrom !== undefined) set.valid_from = patch.validFrom;
  if (patch.validUntil !== undefined) set.valid_until = patch.validUntil;
  if (patch.dayparts !== undefined) set.dayparts = storableJson(patch.dayparts, 'dayparts');
  if (patch.enabled !== undefined) set.enabled = patch.enabled ? 1 : 0;
  return set;
}

/** 400: an item that nests a playlist plays that playlist's own length; it takes no duration. */
export function assertNoNestedDuration(itemIds: readonly string[], field = 'durationMs'): void {
  if (itemIds.length === 0) return;
  throw new ApiError(
    'validation_failed',
    'An item that nests a playlist plays that playlist’s own items for their own durations: durationMs must be null for it',
    {
      details: { itemIds, issues: [{ location: 'body', path: [field], message: 'not allowed on a nested-playlist item', code: 'not_supported' }] },
    },
  );
}

/** validFrom must come before validUntil once a patch is applied. */
export function assertValidity(validFrom: string | null, validUntil: string | null): void {
  if (validFrom && validUntil && Date.parse(validUntil) <= Date.parse(validFrom)) {
    throw new ApiError('validation_failed', 'validUntil must be after validFrom', {
      details: { issues: [{ location: 'body', path: ['validUntil'], message: 'must be after validFrom', code: 'invalid_range' }] },
    });
  }
}

/** Renumbers positions 0..n-1 in the given order. */
export async function renumber(db: Db, orderedIds: readonly string[]): Promise<void> {
  for (let i = 0; i < orderedIds.length; i++) {
    await db.updateTable('playlist_items').set({ position: i }).where('id', '=', orderedIds[i]!).execute();
  }
}

export interface PlaylistListQuery {
  cursor?: string | undefined;
  limit: number;
  /** Part of the name, any case. */
  q?: string | undefined;
}

/** One page of playlists by name with their item counts (limit + 1 rows: the extra one says there is a next page). */
export async function listPlaylistRows(db: Db, query: PlaylistListQuery) {
  let q = db
    .selectFrom('playlists')
    .selectAll('playlists')
    .select((eb) =>
      eb.selectFrom('playlist_items').select(eb.fn.countAll<number>().as('n')).whereRef('playlist_items.playlist_id', '=', 'playlists.id').as('item_count'),
    )
    .where(afterCursor('name', 'id', 'asc', query.cursor));
  const text = query.q;
  if (text) q = q.where((eb) => eb(eb.fn('instr', [eb.fn('lower', ['name']), eb.val(text.toLowerCase())]), '>', 0));
  return q
    .orderBy('name')
    .orderBy('id')
    .limit(query.limit + 1)
    .execute();
}

export async function playlistExists(db: Db, id: string): Promise<boolean> {
  return Boolean(await db.selectFrom('playlists').select('id').where('id', '=', id).executeTakeFirst());
}

export async function insertPlaylist(db: Db, row: PlaylistRow): Promise<void> {
  await db.insertInto('playlists').values(row).execute();
}

/** Sets columns of a playlist (its revision is `touchPlaylist`'s). */
export async function updatePlaylist(db: Db, id: string, set: Partial<Pick<PlaylistRow, 'name' | 'description' | 'tag_rule'>>): Promise<void> {
  await db.updateTable('playlists').set(set).where('id', '=', id).execute();
}

/** Deletes a playlist while `revision` is current, with the assignments left of screens or groups deleted since. */
export async function deletePlaylistRow(db: Db, id: string, revision: number): Promise<void> {
  await db.deleteFrom('playlist_assignments').where('playlist_id', '=', id).execute();
  await db.deleteFrom('playlists').where('id', '=', id).where('revision', '=', revision).execute();
}

export async function getItemRow(db: Db, playlistId: string, itemId: string): Promise<ItemRow | undefined> {
  return db.selectFrom('playlist_items').selectAll().where('id', '=', itemId).where('playlist_id', '=', playlistId).executeTakeFirst();
}

export async function insertItems(db: Db, rows: readonly ItemRow[]): Promise<void> {
  await db
    .insertInto('playlist_items')
    .values([...rows])
    .execute();
}

export async function updateItem(db: Db, id: string, set: Partial<ItemRow>): Promise<void> {
  await db.updateTable('playlist_items').set(set).where('id', '=', id).execute();
}

export async function deleteItems(db: Db, ids: readonly string[]): Promise<void> {
  await db
    .deleteFrom('playlist_items')
    .where('id', 'in', [...ids])
    .execute();
}
