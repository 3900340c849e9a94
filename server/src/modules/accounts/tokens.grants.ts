import type { AppDeps } from '../../platform/app-deps.js';
import { ScopeKey } from '../../platform/app-scope.js';
import type { Db } from '../../platform/db/database.js';
import type { Principal } from '../../platform/http/auth.js';
import { invalidReference, type Reference } from '../../platform/http/errors.js';
import { findTokenById } from './tokens.repo.js';

/**
 * Integration tokens' table grants (issue 18, docs/data-sources.md "Integration tokens"): a
 * token with `manual_table_rows:write` writes the records of the manual tables listed in its
 * `data_source_ids`, and no others. The list is set when the token is made.
 *
 * Accounts cannot import the data-sources module (it imports accounts), so the data-sources
 * module tells accounts which ids are manual tables through this seam, per app.
 */

/** For the given ids: each one that names a data source, and whether it is a manual table. */
export type TableResolver = (db: Db, ids: readonly string[]) => Promise<Map<string, { manualTable: boolean }>>;

const RESOLVER = new ScopeKey<{ resolve: TableResolver | null }>('accounts.token-tables', () => ({ resolve: null }));

/** The data-sources module registers how to tell manual tables apart (one per app); answers a remover. */
export function setTokenTableResolver(deps: AppDeps, resolve: TableResolver): () => void {
  const slot = deps.scope.get(RESOLVER);
  slot.resolve = resolve;
  return () => {
    if (slot.resolve === resolve) slot.resolve = null;
  };
}

/**
 * Checks a token's grant list: each id must be an existing manual-table source, else 400
 * `validation_failed` naming `dataSourceIds.N`. Without a resolver (no data-sources module)
 * nothing can be granted.
 */
export async function checkGrantedTables(deps: AppDeps, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  const resolve = deps.scope.get(RESOLVER).resolve;
  const known = resolve ? await resolve(deps.db, ids) : new Map<string, { manualTable: boolean }>();
  const refs: Reference[] = [];
  for (const [i, id] of ids.entries()) {
    const source = known.get(id);
    if (!source) refs.push({ path: ['dataSourceIds', i], message: 'no such data source' });
    else if (!source.manualTable) refs.push({ path: ['dataSourceIds', i], message: 'not a manual table: a token can only be granted manual tables' });
  }
  if (refs.length) throw invalidReference(`dataSourceIds.${refs[0]!.path[1]}: ${refs[0]!.message}`, refs);
}

/**
 * True when `principal` is an integration token that may write records of the manual table
 * `sourceId`: not revoked, with `manual_table_rows:write`, and granted that table. Read from
 * the database (a token changed since it was authenticated counts as it is now). False for
 * every other principal: sessions go through the source's access rules instead.
 */
export async function tokenMayWriteTable(db: Db, principal: Principal, sourceId: string): Promise<boolean> {
  if (principal.kind !== 'integration') return false;
  const row = await findTokenById(db, principal.tokenId);
  if (!row || row.revoked_at) return false;
  const capabilities = JSON.parse(row.capabilities) as string[];
  if (!capabilities.includes('manual_table_rows:write')) return false;
  return grantedTables(row.data_source_ids).includes(sourceId.toLowerCase());
}

/** The stored grant list (a JSON array of ids); anything else reads as no grants. */
export function grantedTables(stored: string): string[] {
  try {
    const ids = JSON.parse(stored) as unknown;
    return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === 'string') : [];
  } catch {
    return [];
  }
}
