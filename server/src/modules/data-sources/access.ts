import type { Principal, Role } from '../../platform/http/auth.js';
import type { Db } from '../../platform/db/database.js';
import type { DataSourceAccessLevel } from '../../platform/db/schema.js';
import { ApiError } from '../../platform/http/errors.js';
import { findSourceRow, grantsOfUser } from './data-sources.repo.js';

/**
 * Access to one source (docs/data-sources.md, "Access"): owners and admins of the server
 * have every right on every source; anyone else has the level their role gives (editors
 * and publishers `editor`, viewers `viewer`) unless a grant on that source says otherwise,
 * narrower or wider. `viewer` reads, `editor` changes the source, `owner` also deletes it
 * and manages its grants. The person who makes a source owns it.
 */
export const ACCESS_LEVELS = ['viewer', 'editor', 'owner'] as const satisfies readonly DataSourceAccessLevel[];
export type AccessLevel = DataSourceAccessLevel;

const RANK: Record<AccessLevel, number> = { viewer: 0, editor: 1, owner: 2 };

export const atLeast = (level: AccessLevel, needed: AccessLevel) => RANK[level] >= RANK[needed];

/** Owners and admins of the server: every source, whatever the grants say. */
export const isAdmin = (role: Role) => role === 'owner' || role === 'admin';

/** The level a role has on a source without a grant. */
export function defaultLevel(role: Role): AccessLevel {
  if (isAdmin(role)) return 'owner';
  return role === 'viewer' ? 'viewer' : 'editor';
}

export function effectiveLevel(role: Role, grant: AccessLevel | null): AccessLevel {
  if (isAdmin(role)) return 'owner';
  return grant ?? defaultLevel(role);
}

export interface Caller {
  userId: string;
  role: Role;
}

export function callerOf(auth: Principal): Caller {
  if (auth.kind !== 'session') throw new ApiError('forbidden', 'Data sources are managed from a console session');
  return { userId: auth.userId, role: auth.role };
}

/** The caller's level on each of the sources (one query). */
export async function levelsOf(db: Db, caller: Caller, sourceIds: readonly string[]): Promise<Map<string, AccessLevel>> {
  const out = new Map<string, AccessLevel>();
  if (sourceIds.length === 0) return out;
  const grants = isAdmin(caller.role) ? [] : await grantsOfUser(db, caller.userId, sourceIds);
  const byId = new Map(grants.map((g) => [g.source_id, g.level]));
  for (const id of sourceIds) out.set(id, effectiveLevel(caller.role, byId.get(id) ?? null));
  return out;
}

export async function levelOf(db: Db, caller: Caller, sourceId: string): Promise<AccessLevel> {
  return (await levelsOf(db, caller, [sourceId])).get(sourceId)!;
}

const VERBS: Record<AccessLevel, string> = { viewer: 'read', editor: 'change', owner: 'delete or manage access to' };

/** 403 unless the caller has `needed` on the source. */
export async function requireLevel(db: Db, caller: Caller, sourceId: string, needed: AccessLevel, name: string): Promise<AccessLevel> {
  const level = await levelOf(db, caller, sourceId);
  if (!atLeast(level, needed)) {
    throw new ApiError('forbidden', `You may not ${VERBS[needed]} data source "${name}" (your access: ${level}; this needs ${needed})`);
  }
  return level;
}

/** 403 unless the caller may read the source (widgets bound to it show its rows); nothing for an unknown source. */
export async function requireSourceReader(db: Db, auth: Principal, sourceId: string): Promise<void> {
  const row = await findSourceRow(db, sourceId);
  if (row) await requireLevel(db, callerOf(auth), sourceId, 'viewer', row.name);
}
