/**
 * The publication model shared by every content type (issue 20, docs/publishing.md): editing
 * changes a draft; publishing makes an immutable, numbered, attributed publication; screens
 * play publications only. Each type (playlist, layout, schedule, widget, campaign) answers
 * the same `Publishable` contract from its own module; the publishing module
 * (modules/publishing/) builds submissions, history, compare and rollback on it alone.
 */
import type { AppDeps } from './app-deps.js';
import { ScopeKey } from './app-scope.js';
import type { Db } from './db/database.js';
import { newId, nowIso } from './db/ids.js';
import { storableJson } from './db/json.js';
import type { ContentPublicationsTable } from './db/schema.js';
import { ApiError } from './http/errors.js';
import { afterCursor, toPage } from './http/pagination.js';

/** Every type the workflow knows, in the order the API lists them. */
export const PUBLISHABLE_TYPES = ['playlist', 'layout', 'schedule', 'widget', 'campaign'] as const;
export type PublishableType = (typeof PUBLISHABLE_TYPES)[number];

/** Why a publication was made. */
export const PUBLICATION_SOURCES = ['edit', 'submission', 'rollback', 'campaign', 'migration'] as const;
export type PublicationSource = (typeof PUBLICATION_SOURCES)[number];

/** A publication as the API answers it (DESIGN.md section 12: `{id, number, publishedAt, publishedBy}`). */
export interface PublicationSummary {
  id: string;
  /** 1, 2, 3... per content item. */
  number: number;
  publishedAt: string;
  /** User id, or null (the system, a deleted user). */
  publishedBy: string | null;
  note: string;
  source: PublicationSource;
}

/** Where a content item's draft stands. */
export interface DraftState {
  name: string;
  /**
   * The content's edit revision (its If-Match value): it goes up with every change of the
   * draft, so a submission made at revision N is stale once it is not N any more.
   */
  revision: number;
  /** The draft as a JSON snapshot: what publishing it now would publish. */
  draft: unknown;
  /** The publication screens play, or null (never published). */
  published: PublicationSummary | null;
  /** The draft differs from the publication screens play (true when never published). */
  unpublishedChanges: boolean;
}

/**
 * A snapshot reduced for comparing: top-level fields plus an ordered list of keyed items
 * (a playlist's items, a layout's zones, a schedule's targets...). `compare` diffs two of
 * these: fields changed, items added, removed, moved (by key) and changed (by field).
 */
export interface Comparable {
  fields: Record<string, unknown>;
  items: { key: string; label: string; fields: Record<string, unknown> }[];
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** One content type's side of the workflow. All methods throw ApiError (notFound, conflict) as routes would. */
export interface Publishable {
  type: PublishableType;
  /** The item's draft, revision and publication; 404 (notFound) when it does not exist. */
  state(db: Db, id: string): Promise<DraftState>;
  /**
   * Publishes `snapshot` (a draft or an older publication of this item) as the next
   * publication, in the caller's transaction; 409 when it refers to what no longer exists.
   * Does not tell screens: call `announce` after the transaction commits.
   */
  publish(trx: Db, id: string, snapshot: unknown, by: string | null, note: string, source: PublicationSource): Promise<PublicationSummary>;
  /** Tells the screens that play the item (contentChanged); after the commit. */
  announce(deps: AppDeps, id: string): Promise<void>;
  /** Publications newest first. */
  publications(db: Db, id: string, page: { cursor?: string | undefined; limit: number }): Promise<Page<PublicationSummary>>;
  /** One publication of the item with its snapshot, or undefined. */
  publication(db: Db, id: string, publicationId: string): Promise<{ summary: PublicationSummary; snapshot: unknown } | undefined>;
  /** Replaces the draft with `snapshot` (bumps the revision); 409 when it refers to what no longer exists. */
  restoreDraft(trx: Db, id: string, snapshot: unknown): Promise<void>;
  /** The snapshot reduced for `compare`. */
  comparable(snapshot: unknown): Comparable;
}

// The store of `content_publications` (every type but layouts, which keep layout_revisions).

export function publicationSummary(
  r: Pick<ContentPublicationsTable, 'id' | 'number' | 'published_at' | 'published_by' | 'note' | 'source'>,
): PublicationSummary {
  return { id: r.id, number: r.number, publishedAt: r.published_at, publishedBy: r.published_by, note: r.note, source: r.source as PublicationSource };
}

/** Stores `snapshot` as the next publication of the item (in the caller's transaction); answers it and its row id. */
export async function insertPublication(
  trx: Db,
  p: { type: PublishableType; contentId: string; snapshot: unknown; note: string; source: PublicationSource; by: string | null },
): Promise<PublicationSummary> {
  const last = await trx
    .selectFrom('content_publications')
    .select((eb) => eb.fn.max<number>('number').as('n'))
    .where('content_type', '=', p.type)
    .where('content_id', '=', p.contentId)
    .executeTakeFirst();
  const row: ContentPublicationsTable = {
    id: newId(),
    content_type: p.type,
    content_id: p.contentId,
    number: Number(last?.n ?? 0) + 1,
    snapshot: storableJson(p.snapshot, 'The publication'),
    note: p.note,
    source: p.source,
    published_by: p.by,
    published_at: nowIso(),
  };
  await trx.insertInto('content_publications').values(row).execute();
  return publicationSummary(row);
}

/** One page of an item's publications, newest first. */
export async function listPublications(
  db: Db,
  type: PublishableType,
  contentId: string,
  page: { cursor?: string | undefined; limit: number },
): Promise<Page<PublicationSummary>> {
  const rows = await db
    .selectFrom('content_publications')
    .select(['id', 'number', 'published_at', 'published_by', 'note', 'source'])
    .where('content_type', '=', type)
    .where('content_id', '=', contentId)
    .where(afterCursor('number', 'id', 'desc', page.cursor))
    .orderBy('number', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
    .execute();
  const p = toPage(rows, page.limit, (r) => r.number);
  return { items: p.items.map(publicationSummary), nextCursor: p.nextCursor };
}

/** One publication of the item with its snapshot (parsed), or undefined. */
export async function getPublication(
  db: Db,
  type: PublishableType,
  contentId: string,
  publicationId: string,
): Promise<{ summary: PublicationSummary; snapshot: unknown } | undefined> {
  const row = await db
    .selectFrom('content_publications')
    .selectAll()
    .where('id', '=', publicationId)
    .where('content_type', '=', type)
    .where('content_id', '=', contentId)
    .executeTakeFirst();
  return row ? { summary: publicationSummary(row), snapshot: JSON.parse(row.snapshot) as unknown } : undefined;
}

/** Runs in the transaction that deletes a content item (the publishing module withdraws its open submissions). */
export type ContentDeletedHook = (trx: Db, type: PublishableType, contentId: string, name: string) => Promise<void>;
const CONTENT_DELETED = new ScopeKey('publications.contentDeleted', (): ContentDeletedHook[] => []);

/** A module that keeps per-item state of the workflow registers here, in its install(). */
export function onContentDeleted(deps: AppDeps, hook: ContentDeletedHook): void {
  deps.scope.get(CONTENT_DELETED).push(hook);
}

/**
 * An item was deleted (call it in the deleting transaction): its publications are forgotten
 * and the registered hooks run, so nothing of the workflow waits on what is gone.
 */
export async function forgetContent(deps: AppDeps, trx: Db, type: PublishableType, contentId: string, name: string): Promise<void> {
  await trx.deleteFrom('content_publications').where('content_type', '=', type).where('content_id', '=', contentId).execute();
  for (const hook of deps.scope.get(CONTENT_DELETED)) await hook(trx, type, contentId, name);
}

// What routes answer while approvals are required (settings.approvals.required).

/** 409 for a direct publish while approvals are required: a submission is the way to screens. */
export function submitInstead(type: PublishableType, id: string): ApiError {
  return new ApiError('conflict', `Approvals are required: submit it for approval (POST /api/v1/content-submissions/${type}/${id})`);
}

/** 403 for someone below publisher deleting what screens play while approvals are required. */
export function publisherNeededToDelete(what: string): ApiError {
  return new ApiError('forbidden', `${what} is published and approvals are required: only a publisher, admin or owner may delete what screens play`);
}
