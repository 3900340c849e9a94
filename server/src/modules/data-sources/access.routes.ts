import { z } from 'zod';
import { ROLES } from '../../platform/http/auth.js';
import { ApiError, notFound } from '../../platform/http/errors.js';
import { pageOf, pageQuery } from '../../platform/http/pagination.js';
import { defineRoute, ok, uuidParam } from '../../platform/http/route.js';
import { directoryEntry, userDirectory } from '../accounts/index.js';
import { defaultLevel, effectiveLevel, isAdmin, requireLevel } from './access.js';
import { clearGrant, getSourceRow, grantOf, listGrants, setGrant } from './data-sources.repo.js';
import { TAGS } from './data-sources.schemas.js';
import { envOf } from './data-sources.service.js';
import { AccessBody, AccessDto, AccessLevelSchema, DirectoryEntryDto, IdParams } from './data-sources.schemas.js';

/** Roles a grant changes anything for (owners and admins have every source anyway). */
const GRANTABLE_ROLES = ROLES.filter((r) => !isAdmin(r));

const GrantStateDto = z.object({
  userId: z.string(),
  displayName: z.string(),
  role: z.string(),
  grant: AccessLevelSchema.nullable().describe('The grant on this source; null: none (the role’s default applies)'),
  level: AccessLevelSchema.describe('What the user may do with the source now'),
});

export const accessRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/data-sources/{id}/access',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'Who has a grant on a data source, and what each role has without one',
    description:
      'Needs editor access to the source. Owners and admins have every source; others have their role’s default (`defaults`) unless a grant says otherwise.',
    params: IdParams,
    query: pageQuery,
    responses: { 200: { description: 'The grants', data: AccessDto }, 403: { description: 'forbidden: the caller’s access to this source is below editor' } },
    handler: async (ctx, { params, query, auth }) => {
      const env = envOf(ctx, auth);
      const row = await getSourceRow(ctx.deps.db, params.id);
      const myAccess = await requireLevel(ctx.deps.db, env.caller, row.id, 'editor', row.name);
      const page = await listGrants(ctx.deps.db, row.id, query);
      return ok({
        items: page.items.map((g) => ({
          userId: g.id,
          displayName: g.display_name,
          role: g.role,
          level: g.level,
          grantedBy: g.granted_by,
          updatedAt: g.updated_at,
        })),
        nextCursor: page.nextCursor,
        myAccess,
        defaults: Object.fromEntries(ROLES.map((r) => [r, defaultLevel(r)])) as Record<(typeof ROLES)[number], 'viewer' | 'editor' | 'owner'>,
      });
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/api/v1/data-sources/{id}/access/{userId}',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'Set or clear one user’s grant on a data source',
    description:
      'Needs owner access to the source. `level` viewer narrows an editor to reading it; editor or owner widens a viewer; null clears the grant. Owners and admins of the server have every source: a grant for them is 409.',
    params: z.object({ id: uuidParam, userId: uuidParam }),
    body: AccessBody,
    responses: {
      200: { description: 'The user’s grant and level now', data: GrantStateDto },
      403: { description: 'forbidden: the caller does not own this source' },
      409: { description: 'conflict: the user is an owner or admin of the server (every source is theirs)' },
    },
    handler: async (ctx, { params, body, auth }) => {
      const env = envOf(ctx, auth);
      const db = ctx.deps.db;
      const row = await getSourceRow(db, params.id);
      await requireLevel(db, env.caller, row.id, 'owner', row.name);
      const user = await directoryEntry(db, params.userId);
      if (!user) throw notFound('User');
      if (isAdmin(user.role)) {
        throw new ApiError(
          'conflict',
          `${user.displayName} is ${user.role === 'owner' ? 'an owner' : 'an admin'} of this server and has every data source; a grant changes nothing`,
        );
      }
      if (body.level === null) await clearGrant(db, row.id, user.id);
      else await setGrant(db, row.id, user.id, body.level, env.caller.userId);
      const grant = (await grantOf(db, row.id, user.id))?.level ?? null;
      return ok({ userId: user.id, displayName: user.displayName, role: user.role, grant, level: effectiveLevel(user.role, grant) });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/data-sources/{id}/user-directory',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'The people the caller may grant access to this source: id, display name and role only',
    description: 'Needs owner access to the source. Lists active users whose role a grant affects (publishers, editors, viewers).',
    params: IdParams,
    query: pageQuery.extend({ q: z.string().max(200).optional().describe('Part of the display name') }),
    responses: { 200: { description: 'People', data: pageOf(DirectoryEntryDto) }, 403: { description: 'forbidden: the caller does not own this source' } },
    handler: async (ctx, { params, query, auth }) => {
      const env = envOf(ctx, auth);
      const row = await getSourceRow(ctx.deps.db, params.id);
      await requireLevel(ctx.deps.db, env.caller, row.id, 'owner', row.name);
      return ok(await userDirectory(ctx.deps.db, { ...query, roles: GRANTABLE_ROLES }));
    },
  }),
];
