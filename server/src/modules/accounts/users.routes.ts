import type { Context } from 'koa';
import { z } from 'zod';
import type { SessionPrincipal } from '../../platform/http/auth.js';
import { ROLES } from '../../platform/http/auth.js';
import { ApiError, notFound } from '../../platform/http/errors.js';
import { pageOf, pageQuery, toPage } from '../../platform/http/pagination.js';
import { created, defineRoute, noContent, ok, uuidParam } from '../../platform/http/route.js';
import { hashPassword, PasswordSchema } from './passwords.js';
import { endSession } from './sessions.js';
import { deleteDisabledUser, findUserByEmail, findUserById, insertUser, listUsers, resetUserSecurity, toUserDto, UserDto, type UserRow } from './users.repo.js';
import { assertMayManage, changeUser } from './users.service.js';

const TAGS = ['Users'];
const IdParams = z.object({ id: uuidParam });

async function targetUser(ctx: Context, id: string): Promise<UserRow> {
  const user = await findUserById(ctx.deps.db, id);
  if (!user) throw notFound('User');
  return user;
}

export const userRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/users',
    auth: 'session',
    minRole: 'admin',
    extension: true,
    tags: TAGS,
    summary: 'List users',
    query: pageQuery.extend({ q: z.string().max(200).optional(), role: z.enum(ROLES).optional(), disabled: z.enum(['true', 'false']).optional() }),
    responses: { 200: { description: 'Users by email', data: pageOf(UserDto) } },
    handler: async (ctx, { query }) => {
      const rows = await listUsers(ctx.deps.db, query);
      const page = toPage(rows, query.limit, (r) => r.email);
      return ok({ items: page.items.map(toUserDto), nextCursor: page.nextCursor });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/users',
    auth: 'session',
    minRole: 'admin',
    extension: true,
    tags: TAGS,
    summary: 'Create a user, with a first password or none (then make them a set-password link); they can add MFA after signing in',
    description: 'Without `password` the user cannot sign in until they set one with a link from `POST /api/v1/users/{id}/password-link`.',
    body: z.object({ email: z.email().max(254), displayName: z.string().trim().min(1).max(100), role: z.enum(ROLES), password: PasswordSchema.optional() }),
    responses: {
      201: { description: 'The user', data: UserDto },
      403: { description: 'forbidden: only an owner makes an owner' },
      409: { description: 'conflict: the email is taken' },
    },
    handler: async (ctx, { body, auth }) => {
      assertMayManage(auth as SessionPrincipal, body);
      if (await findUserByEmail(ctx.deps.db, body.email)) throw new ApiError('conflict', 'A user with this email exists');
      const user = await insertUser(ctx.deps.db, {
        email: body.email,
        displayName: body.displayName,
        role: body.role,
        passwordHash: body.password === undefined ? null : await hashPassword(body.password),
      });
      return created(toUserDto(user));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/users/{id}',
    auth: 'session',
    minRole: 'admin',
    extension: true,
    tags: TAGS,
    summary: 'One user',
    params: IdParams,
    responses: { 200: { description: 'The user', data: UserDto } },
    handler: async (ctx, { params }) => ok(toUserDto(await targetUser(ctx, params.id))),
  }),
  defineRoute({
    method: 'PATCH',
    path: '/api/v1/users/{id}',
    auth: 'session',
    minRole: 'admin',
    extension: true,
    tags: TAGS,
    summary: 'Change a user’s role, display name or disabled state',
    description: 'A role change or disabling ends the user’s sessions. The last active owner cannot be demoted or disabled.',
    params: IdParams,
    body: z.object({ role: z.enum(ROLES).optional(), displayName: z.string().trim().min(1).max(100).optional(), disabled: z.boolean().optional() }),
    responses: { 200: { description: 'The user', data: UserDto }, 409: { description: 'conflict: the last owner' } },
    handler: async (ctx, { params, body, auth }) => {
      const actor = auth as SessionPrincipal;
      const { updated, sessionsEnded } = await changeUser(ctx.deps.db, actor, params.id, body);
      // Your own role changed: this session is gone too; clear its cookie with the answer.
      if (sessionsEnded && updated.id === actor.userId) endSession(ctx);
      return ok(toUserDto(updated));
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/users/{id}/security/reset',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Clear another user’s TOTP, recovery codes and passkeys, and end their sessions',
    params: IdParams,
    responses: {
      409: { description: 'conflict: your own security is reset from your account page' },
      200: { description: 'The user, without MFA', data: UserDto },
    },
    handler: async (ctx, { params, auth }) => {
      const actor = auth as SessionPrincipal;
      const user = await targetUser(ctx, params.id);
      assertMayManage(actor, user);
      if (user.id === actor.userId) throw new ApiError('conflict', 'Reset your own security from your account page');
      const updated = await resetUserSecurity(ctx.deps.db, user.id);
      return ok(toUserDto(updated));
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/v1/users/{id}/permanent',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Delete a disabled user for good',
    params: IdParams,
    responses: { 204: { description: 'Deleted' }, 409: { description: 'conflict: not disabled, or the last owner' } },
    handler: async (ctx, { params, auth }) => {
      const actor = auth as SessionPrincipal;
      const user = await targetUser(ctx, params.id);
      assertMayManage(actor, user);
      // The checks are repeated with the delete in one transaction (deleteDisabledUser).
      const outcome = await deleteDisabledUser(ctx.deps.db, user.id);
      if (outcome === 'not_found') throw notFound('User');
      if (outcome === 'not_disabled') throw new ApiError('conflict', 'Disable the user before deleting them');
      if (outcome === 'last_owner') throw new ApiError('conflict', 'This is the last active owner');
      return noContent();
    },
  }),
];
