import type { Context } from 'koa';
import { z } from 'zod';
import type { Db } from '../../platform/db/database.js';
import { CAPABILITIES, INTEGRATION_TOKEN_PREFIX, type Capability, type IntegrationPrincipal, type SessionPrincipal } from '../../platform/http/auth.js';
import { ApiError, notFound } from '../../platform/http/errors.js';
import { afterCursor, pageOf, pageQuery, toPage } from '../../platform/http/pagination.js';
import { created, defineRoute, ok, uuidParam } from '../../platform/http/route.js';
import type { IntegrationTokensTable } from '../../platform/db/schema.js';
import { randomToken, safeEqual, sha256Hex } from '../../platform/security/secrets.js';
import { storableJson } from '../../platform/db/json.js';
import { newId } from './users.repo.js';

const TOKEN_SHAPE = /^svci_([A-Za-z0-9_-]{8,64})\.([A-Za-z0-9_-]{20,256})$/;
const TOUCH_EVERY_MS = 60_000;

const Token = z
  .object({
    id: z.string(),
    name: z.string(),
    capabilities: z.array(z.enum(CAPABILITIES)),
    createdAt: z.string(),
    createdBy: z.string().nullable(),
    lastUsedAt: z.string().nullable(),
    revokedAt: z.string().nullable(),
  })
  .meta({ id: 'IntegrationToken' });

const toToken = (r: IntegrationTokensTable) => ({
  id: r.id,
  name: r.name,
  capabilities: JSON.parse(r.capabilities) as Capability[],
  createdAt: r.created_at,
  createdBy: r.created_by,
  lastUsedAt: r.last_used_at,
  revokedAt: r.revoked_at,
});

/** The `integration` authenticator: `svci_<public-id>.<secret>`, secret compared by hash in constant time. */
export function integrationAuthenticator(db: Db) {
  return async (_ctx: Context, token: string): Promise<IntegrationPrincipal> => {
    const m = TOKEN_SHAPE.exec(token);
    if (!m) throw new ApiError('invalid_credential', 'Malformed integration token');
    const row = await db.selectFrom('integration_tokens').selectAll().where('public_id', '=', m[1]!).executeTakeFirst();
    if (!row || !safeEqual(row.secret_hash, sha256Hex(m[2]!))) throw new ApiError('invalid_credential', 'Unknown integration token');
    if (row.revoked_at) throw new ApiError('credential_revoked', 'This integration token was revoked');
    const now = Date.now();
    if (!row.last_used_at || now - Date.parse(row.last_used_at) > TOUCH_EVERY_MS) {
      await db
        .updateTable('integration_tokens')
        .set({ last_used_at: new Date(now).toISOString() })
        .where('id', '=', row.id)
        .execute();
    }
    return { kind: 'integration', tokenId: row.id, capabilities: JSON.parse(row.capabilities) as Capability[] };
  };
}

const TAGS = ['Integration tokens'];

export const tokenRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/integration-tokens',
    auth: 'session',
    minRole: 'owner',
    extension: true,
    tags: TAGS,
    summary: 'List integration tokens (never their secrets)',
    query: pageQuery,
    responses: { 200: { description: 'Tokens, newest first', data: pageOf(Token) } },
    handler: async (ctx, { query }) => {
      const rows = await ctx.deps.db
        .selectFrom('integration_tokens')
        .selectAll()
        .where(afterCursor('created_at', 'id', 'desc', query.cursor))
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(query.limit + 1)
        .execute();
      const page = toPage(rows, query.limit, (r) => r.created_at);
      return ok({ items: page.items.map(toToken), nextCursor: page.nextCursor });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/integration-tokens',
    auth: 'session',
    minRole: 'owner',
    extension: true,
    tags: TAGS,
    summary: 'Make an integration token; `token` is shown this once',
    body: z.object({
      name: z.string().trim().min(1).max(100),
      capabilities: z
        .array(z.enum(CAPABILITIES))
        .min(1)
        .refine((c) => new Set(c).size === c.length, 'no duplicates'),
    }),
    responses: { 201: { description: 'The token with its secret', data: Token.extend({ token: z.string() }) } },
    handler: async (ctx, { body, auth }) => {
      const publicId = randomToken(12);
      const secret = randomToken(32);
      const row: IntegrationTokensTable = {
        id: newId(),
        public_id: publicId,
        secret_hash: sha256Hex(secret),
        name: body.name,
        capabilities: storableJson(body.capabilities, 'capabilities'),
        created_by: (auth as SessionPrincipal).userId,
        created_at: new Date().toISOString(),
        last_used_at: null,
        revoked_at: null,
      };
      await ctx.deps.db.insertInto('integration_tokens').values(row).execute();
      return created({ ...toToken(row), token: `${INTEGRATION_TOKEN_PREFIX}${publicId}.${secret}` });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/integration-tokens/{id}/revoke',
    auth: 'session',
    minRole: 'owner',
    extension: true,
    tags: TAGS,
    summary: 'Revoke a token: it stops working at once',
    params: z.object({ id: uuidParam }),
    responses: { 200: { description: 'The revoked token', data: Token } },
    handler: async (ctx, { params }) => {
      const db = ctx.deps.db;
      const row = await db.selectFrom('integration_tokens').selectAll().where('id', '=', params.id).executeTakeFirst();
      if (!row) throw notFound('Integration token');
      if (!row.revoked_at) await db.updateTable('integration_tokens').set({ revoked_at: new Date().toISOString() }).where('id', '=', row.id).execute();
      return ok(toToken(await db.selectFrom('integration_tokens').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow()));
    },
  }),
];
