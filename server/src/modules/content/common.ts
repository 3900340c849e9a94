import { z } from 'zod';
import { ApiError } from '../../platform/http/errors.js';

export { checkRevision, etagOf, ifMatchRevision, revisionCheck, type RevisionCheck } from '../../platform/http/revision.js';

export interface Usage {
  type: 'playlist' | 'layout' | 'schedule' | 'screen-assignment' | 'group-assignment';
  id: string;
  name: string | null;
}

export const UsageDto = z.object({ type: z.string(), id: z.string(), name: z.string().nullable() });

/** 409 naming everything that still uses the thing being deleted. */
export function inUse(what: string, users: readonly Usage[]): ApiError {
  const names = users.slice(0, 5).map((u) => `${u.type} ${u.name ? `"${u.name}"` : u.id}`);
  const more = users.length > 5 ? ` and ${users.length - 5} more` : '';
  return new ApiError('conflict', `${what} is in use by ${names.join(', ')}${more}; remove those uses first`, { details: { usedBy: users } });
}

/** ISO-8601 instant with an offset or Z, normalised to UTC with milliseconds. */
export const Instant = z.iso.datetime({ offset: true }).transform((s) => new Date(s).toISOString());

export { nowIso as now } from '../../platform/db/ids.js';

export function parseJson<T>(text: string | null, fallback: T): T {
  if (text === null) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}
