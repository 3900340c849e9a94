import type { Db } from '../../platform/db/database.js';
import type { Role } from '../../platform/http/auth.js';
import { afterCursor, toPage } from '../../platform/http/pagination.js';

/**
 * People other modules may show (a picker of whom to grant something): id, display name
 * and role of the users who can sign in, nothing more (no email, no activity).
 */
export interface DirectoryEntry {
  id: string;
  displayName: string;
  role: Role;
}

export async function userDirectory(
  db: Db,
  query: { limit: number; cursor?: string; q?: string; roles?: readonly Role[] },
): Promise<{ items: DirectoryEntry[]; nextCursor: string | null }> {
  let q = db
    .selectFrom('users')
    .select(['id', 'display_name', 'role'])
    .where('disabled_at', 'is', null)
    .where(afterCursor('display_name', 'id', 'asc', query.cursor));
  if (query.roles) q = q.where('role', 'in', [...query.roles]);
  if (query.q) q = q.where((eb) => eb(eb.fn('instr', [eb.fn('lower', ['display_name']), eb.val(query.q!.toLowerCase())]), '>', 0));
  const rows = await q
    .orderBy('display_name')
    .orderBy('id')
    .limit(query.limit + 1)
    .execute();
  const page = toPage(rows, query.limit, (r) => r.display_name);
  return { items: page.items.map((r) => ({ id: r.id, displayName: r.display_name, role: r.role })), nextCursor: page.nextCursor };
}

/** One user's directory entry (any state), or undefined. */
export async function directoryEntry(db: Db, id: string): Promise<(DirectoryEntry & { disabled: boolean }) | undefined> {
  const r = await db.selectFrom('users').select(['id', 'display_name', 'role', 'disabled_at']).where('id', '=', id).executeTakeFirst();
  return r ? { id: r.id, displayName: r.display_name, role: r.role, disabled: r.disabled_at !== null } : undefined;
}
