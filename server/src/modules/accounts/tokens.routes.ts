import { z } from 'zod';
import { CAPABILITIES, type Capability, type SessionPrincipal } from '../../platform/http/auth.js';
import { invalidField, notFound } from '../../platform/http/errors.js';
import { pageOf, pageQuery, toPage } from '../../platform/http/pagination.js';
import { created, defineRoute, ok, uuidParam } from '../../platform/http/route.js';
import { checkGrantedTables, grantedTables } from './tokens.grants.js';
import { listTokens, type TokenRow } from './tokens.repo.js';
import { createIntegrationToken, revokeIntegrationToken } from './tokens.service.js';

const Token = z
  .object({
    id: z.string(),
    name: z.string(),
    capabilities: z.array(z.enum(CAPABILITIES)),
    createdAt: z.string(),
    createdBy: z.string().nullable(),
    lastUsedAt: z.string().nullable(),
    revokedAt: z.string().nullable(),
    dataSourceIds: z
      .array(z.string())
      .describe('The manual tables (data source ids) a manual_table_rows:write token may write records of; set when the token is made'),
  })
  .meta({ id: 'IntegrationToken' });

const toToken = (r: TokenRow) => ({
  id: r.id,
  name: r.name,
  capabilities: JSON.parse(r.capabilities) as Capability[],
  createdAt: r.created_at,
  createdBy: r.created_by,
  lastUsedAt: r.last_used_at,
  revokedAt: r.revoked_at,
  dataSourceIds: grantedTables(r.data_source_ids),
});

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
      const rows = await listTokens(ctx.deps.db, query.cursor, query.limit);
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
      dataSourceIds: z
        .array(uuidParam)
        .max(500)
        .refine((ids) => new Set(ids).size === ids.length, 'no duplicates')
        .default([])
        .describe(
          'With manual_table_rows:write: the manual tables the token may write records of (each an existing manual-table source). A token’s grants are set here; to change them, make a new token and revoke the old one',
        ),
    }),
    responses: { 201: { description: 'The token with its secret', data: Token.extend({ token: z.string() }) } },
    handler: async (ctx, { body, auth }) => {
      if (body.dataSourceIds.length > 0 && !body.capabilities.includes('manual_table_rows:write')) {
        throw invalidField('dataSourceIds', 'dataSourceIds: tables are granted only to a token with manual_table_rows:write');
      }
      await checkGrantedTables(ctx.deps, body.dataSourceIds);
      const { row, token } = await createIntegrationToken(ctx.deps.db, {
        name: body.name,
        capabilities: body.capabilities,
        createdBy: (auth as SessionPrincipal).userId,
        dataSourceIds: body.dataSourceIds,
      });
      return created({ ...toToken(row), token });
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
      const row = await revokeIntegrationToken(ctx.deps.db, params.id);
      if (!row) throw notFound('Integration token');
      return ok(toToken(row));
    },
  }),
];
