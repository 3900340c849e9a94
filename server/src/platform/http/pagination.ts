import { sql } from 'kysely';
import { z } from 'zod';
import { ApiError } from './errors.js';

export const DEFAULT_PAGE_LIMIT = 50;
export const MAX_PAGE_LIMIT = 500;

/** `?limit=&cursor=` of every collection (DESIGN.md section 3); merge into a route's query schema. */
export const pageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_LIMIT).default(DEFAULT_PAGE_LIMIT),
  cursor: z.string().min(1).max(512).optional(),
});

/** `{"items": [...], "nextCursor": string|null}`: the data of every collection. */
export function pageOf<T extends z.ZodType>(item: T) {
  return z.object({ items: z.array(item), nextCursor: z.string().nullable() });
}

/**
 * A cursor is the position after the last item returned: the sort key of that item and
 * its id (the tie-breaker), base64url JSON, opaque to clients.
 */
export interface CursorPosition {
  key: string | number | null;
  id: string;
}

export function encodeCursor(pos: CursorPosition): string {
  return Buffer.from(JSON.stringify([pos.key, pos.id]), 'utf8').toString('base64url');
}

const cursorShape = z.tuple([z.union([z.string(), z.number(), z.null()]), z.string().min(1)]);

export function decodeCursor(cursor: string): CursorPosition {
  try {
    const parsed = cursorShape.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
    return { key: parsed[0], id: parsed[1] };
  } catch {
    throw new ApiError('validation_failed', 'The cursor is not one this server issued', {
      details: { issues: [{ location: 'query', path: ['cursor'], message: 'invalid cursor', code: 'invalid_cursor' }] },
    });
  }
}

/**
 * Given rows fetched with `limit + 1`, returns the page and the cursor to the next one.
 * `keyOf` gives the sort key the query orders by (its id breaks ties).
 */
export function toPage<T extends { id: string }>(
  rows: readonly T[],
  limit: number,
  keyOf: (row: T) => string | number | null,
): { items: T[]; nextCursor: string | null } {
  if (rows.length <= limit) return { items: [...rows], nextCursor: null };
  const items = rows.slice(0, limit);
  const last = items[items.length - 1]!;
  return { items, nextCursor: encodeCursor({ key: keyOf(last), id: last.id }) };
}

/**
 * Keyset condition for kysely: rows strictly after `cursor` in the order
 * (`sortColumn`, `idColumn`) `direction`. Sort keys must be non-null columns.
 * Use with `.where(afterCursor(...))` and order by the same two columns.
 */
export function afterCursor(sortColumn: string, idColumn: string, direction: 'asc' | 'desc', cursor: string | undefined) {
  if (!cursor) return sql<boolean>`true`;
  const pos = decodeCursor(cursor);
  const op = sql.raw(direction === 'asc' ? '>' : '<');
  return sql<boolean>`(${sql.ref(sortColumn)}, ${sql.ref(idColumn)}) ${op} (${pos.key}, ${pos.id})`;
}
