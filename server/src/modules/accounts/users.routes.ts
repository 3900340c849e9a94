import type { Context } from 'koa';
import { z } from 'zod';
import type { SessionPrincipal } from '../../platform/http/auth.js';
import { ROLES } from '../../platform/http/auth.js';
import { ApiError, notFound } from '../../platform/http/errors.js';
import { afterCursor, pageOf, pageQuery, toPage } from '../../platform/http/pagination.js';
import { created, defineRoute, noContent, ok, uuidParam } from '../../platform/http/route.js';
import { hashPassword, PasswordSchema } from './passwords.js';
import { endSession } from './sessions.js';
import {
  countActiveOwners,
  deleteDisabledUser,
  endUserSessions,
  findUserByEmail,
  findUserById,
  insertUser,
  toUserDto,
  updateUser,
  UserDto,
  type UserRow,
} from './users.repo.js';

const TAGS = ['Users'];
const IdParams = z.object({ id: uuidParam });

/** Admins manage everyone but owners; only an owner touches an owner or makes one. */
function assertMayManage(actor: SessionPrincipal, target: UserRow | { role: UserRow['role'] }) {
  if (target.role === 'owner' && actor.role !== 'owner') throw new ApiError('forbidden', 'Only an owner can manage owners');
}

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
      let q = ctx.deps.db
        .selectFrom('users')
        .selectAll()
        .where(afterCursor('email', 'id', 'asc', query.cursor));
      if (query.q) {
        // instr, not LIKE: the search text is literal (no % or _ wildcards).
        const needle = query.q.toLowerCase();
        q = q.where((eb) =>
          eb.or([eb(eb.fn('instr', ['email', eb.val(needle)]), '>', 0), eb(eb.fn('instr', [eb.fn('lower', ['display_name']), eb.val(needle)]), '>', 0)]),
        );
      }
      if (query.role) q = q.where('role', '=', query.role);
      if (query.disabled) q = q.where('disabled_at', query.disabled === 'true' ? 'is not' : 'is', null);
      const rows = await q
        .orderBy('email')
        .orderBy('id')
        .limit(query.limit + 1)
        .execute();
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
      // Read, check and write in one transaction (it holds the database's one connection):
      // two owners disabling or demoting each other at once cannot both pass the
      // last-active-owner check.
      const { updated, sessionsEnded } = await ctx.deps.db.transaction().execute(async (trx) => {
        const user = await findUserById(trx, params.id);
        if (!user) throw notFound('User');
        assertMayManage(actor, user);
        if (body.role) assertMayManage(actor, { role: body.role });
        const demoting = body.role !== undefined && body.role !== 'owner' && user.role === 'owner';
        const disabling = body.disabled === true && !user.disabled_at;
        if ((demoting || (disabling && user.role === 'owner')) && (await countActiveOwners(trx, user.id)) === 0) {
          throw new ApiError('conflict', 'This is the last active owner; make another owner first');
        }
        const updated = await updateUser(trx, user.id, {
          ...(body.role ? { role: body.role } : {}),
          ...(body.displayName ? { display_name: body.displayName } : {}),
          ...(body.disabled !== undefined ? { disabled_at: body.disabled ? (user.disabled_at ?? new Date().toISOString()) : null } : {}),
        });
        // Privileges changed: the user's sessions end (they sign in again under the new role).
        const sessionsEnded = Boolean((body.role && body.role !== user.role) || disabling);
        if (sessionsEnded) await endUserSessions(trx, user.id);
        return { updated, sessionsEnded };
      });
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
      const updated = await ctx.deps.db.transaction().execute(async (trx) => {
        await trx.deleteFrom('recovery_codes').where('user_id', '=', user.id).execute();
        await trx.deleteFrom('passkeys').where('user_id', '=', user.id).execute();
        await endUserSessions(trx, user.id);
        return updateUser(trx, user.id, { totp_enabled: 0, totp_secret_sealed: null, totp_pending_sealed: null, totp_last_step: null });
      });
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
