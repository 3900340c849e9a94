import type { Context } from 'koa';
import { ApiError } from './errors.js';

/**
 * Optimistic concurrency (DESIGN.md, If-Match): a resource's revision is its ETag (`"3"`), and
 * a write may name the revision it read in `If-Match`. Routes that take it say `ifMatch: true`
 * (the 400 and 412 are then declared for them centrally).
 */

/** `If-Match: 3`, `"3"` or `W/"3"` -> 3; `*` or absent -> null; anything else is a 400 naming the header. */
export function ifMatchRevision(ctx: Context): number | null {
  const raw = ctx.get('if-match').trim();
  if (!raw || raw === '*') return null;
  const m = /^(?:W\/)?"?(\d{1,12})"?$/.exec(raw);
  if (!m) {
    throw new ApiError('validation_failed', 'If-Match must be the revision number in quotes, as in the ETag (e.g. If-Match: "3")', {
      details: { issues: [{ location: 'headers', path: ['if-match'], message: 'not a revision', code: 'invalid_format' }] },
    });
  }
  return Number(m[1]);
}

/** 412 `version_conflict` when the caller's If-Match names a revision that is no longer current. */
export function checkRevision(ctx: Context, current: number): void {
  const wanted = ifMatchRevision(ctx);
  if (wanted !== null && wanted !== current) {
    throw new ApiError(
      'version_conflict',
      `This was changed meanwhile: revision ${current} is current, If-Match named ${wanted}. Reload and apply your change again.`,
      { details: { currentRevision: current } },
    );
  }
}

/**
 * `checkRevision` bound to a request, for a service that reads the current revision later
 * (inside the change's transaction) and does not see the request.
 */
export type RevisionCheck = (current: number) => void;
export const revisionCheck =
  (ctx: Context): RevisionCheck =>
  (current) =>
    checkRevision(ctx, current);

/** The ETag header of a revision. */
export const etagOf = (revision: number) => ({ ETag: `"${revision}"` });
