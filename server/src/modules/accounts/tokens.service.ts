import type { Context } from 'koa';
import type { Db } from '../../platform/db/database.js';
import { storableJson } from '../../platform/db/json.js';
import { type Capability, INTEGRATION_TOKEN_PREFIX, type IntegrationPrincipal } from '../../platform/http/auth.js';
import { ApiError } from '../../platform/http/errors.js';
import { randomToken, safeEqual, sha256Hex } from '../../platform/security/secrets.js';
import { grantedTables } from './tokens.grants.js';
import { findTokenById, findTokenByPublicId, insertToken, setTokenLastUsed, setTokenRevoked, type TokenRow } from './tokens.repo.js';
import { newId } from './users.repo.js';

const TOKEN_SHAPE = /^svci_([A-Za-z0-9_-]{8,64})\.([A-Za-z0-9_-]{20,256})$/;
const TOUCH_EVERY_MS = 60_000;

/** The `integration` authenticator: `svci_<public-id>.<secret>`, secret compared by hash in constant time. */
export function integrationAuthenticator(db: Db) {
  return async (_ctx: Context, token: string): Promise<IntegrationPrincipal> => {
    const m = TOKEN_SHAPE.exec(token);
    if (!m) throw new ApiError('invalid_credential', 'Malformed integration token');
    const row = await findTokenByPublicId(db, m[1]!);
    if (!row || !safeEqual(row.secret_hash, sha256Hex(m[2]!))) throw new ApiError('invalid_credential', 'Unknown integration token');
    if (row.revoked_at) throw new ApiError('credential_revoked', 'This integration token was revoked');
    const now = Date.now();
    if (!row.last_used_at || now - Date.parse(row.last_used_at) > TOUCH_EVERY_MS) await setTokenLastUsed(db, row.id, new Date(now).toISOString());
    return {
      kind: 'integration',
      tokenId: row.id,
      capabilities: JSON.parse(row.capabilities) as Capability[],
      dataSourceIds: grantedTables(row.data_source_ids),
    };
  };
}

/** Makes a token; answers its row and the token itself (shown once: only the secret's hash is kept). */
export async function createIntegrationToken(
  db: Db,
  input: { name: string; capabilities: readonly Capability[]; createdBy: string; dataSourceIds?: readonly string[] },
): Promise<{ row: TokenRow; token: string }> {
  const publicId = randomToken(12);
  const secret = randomToken(32);
  const row: TokenRow = {
    id: newId(),
    public_id: publicId,
    secret_hash: sha256Hex(secret),
    name: input.name,
    capabilities: storableJson(input.capabilities, 'capabilities'),
    created_by: input.createdBy,
    created_at: new Date().toISOString(),
    last_used_at: null,
    revoked_at: null,
    data_source_ids: storableJson(input.dataSourceIds ?? [], 'dataSourceIds'),
  };
  await insertToken(db, row);
  return { row, token: `${INTEGRATION_TOKEN_PREFIX}${publicId}.${secret}` };
}

/** Revokes a token (once: a second revoke keeps the first time); undefined when there is none. */
export async function revokeIntegrationToken(db: Db, id: string): Promise<TokenRow | undefined> {
  const row = await findTokenById(db, id);
  if (!row) return undefined;
  if (!row.revoked_at) await setTokenRevoked(db, row.id, new Date().toISOString());
  const revoked = await findTokenById(db, row.id);
  if (!revoked) throw new Error(`integration token ${row.id} vanished while being revoked`);
  return revoked;
}
