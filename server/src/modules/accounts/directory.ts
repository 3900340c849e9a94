import type { Db } from '../../platform/db/database.js';
import type { Role } from '../../platform/http/auth.js';
import { toPage } from '../../platform/http/pagination.js';
import { directoryRow, directoryRows } from './users.repo.js';

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
  const rows = await directoryRows(db, query);
  const page = toPage(rows, query.limit, (r) => r.display_name);
  return { items: page.items.map((r) => ({ id: r.id, displayName: r.display_name, role: r.role })), nextCursor: page.nextCursor };
}

/** One user's directory entry (any state), or undefined. */
export async function directoryEntry(db: Db, id: string): Promise<(DirectoryEntry & { disabled: boolean }) | undefined> {
  const r = await directoryRow(db, id);
  return r ? { id: r.id, displayName: r.display_name, role: r.role, disabled: r.disabled_at !== null } : undefined;
}
