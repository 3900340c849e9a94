import type { Context } from 'koa';
import { z } from 'zod';
import type { SessionPrincipal } from '../../platform/http/auth.js';
import { ApiError, notFound } from '../../platform/http/errors.js';
import { created, defineRoute, ok, uuidParam } from '../../platform/http/route.js';
import { randomToken } from '../../platform/security/secrets.js';
import { effectivePublicUrl, getSettings } from '../system/index.js';
import { throttled } from './accounts.context.js';
import { hashPassword, PasswordSchema, verifyPassword } from './passwords.js';
import { changeOwnPassword, findLink, issuePasswordLink, type LinkProblem, setUserPassword, usePasswordLink } from './passwords.service.js';
import { startSession } from './sessions.js';
import { findUserById, toUserDto, UserDto, type UserRow } from './users.repo.js';

/** How long a set-password link works. */
export const PASSWORD_LINK_TTL_MS = 24 * 3_600_000;
/** The console page that uses a link; the token rides in the fragment, which browsers never send to a server. */
export const SET_PASSWORD_PATH = '/set-password';

const IdParams = z.object({ id: uuidParam });
/** A link token as the console page sends it (base64url of 32 random bytes is 43 characters). */
const LinkToken = z.string().min(1).max(200);

const LINK_MESSAGES: Record<LinkProblem, string> = {
  unknown: 'This link is not valid. Check that it was copied whole, or ask for a new one.',
  used: 'This link was already used. Ask for a new one if you need to set your password again.',
  expired: 'This link has expired. Ask for a new one.',
};
const linkRefused = (reason: LinkProblem) => new ApiError('invalid_credential', LINK_MESSAGES[reason], { details: { reason } });

/** Admins manage everyone but owners; only an owner resets an owner's password (as for every other user action). */
function assertMayManage(actor: SessionPrincipal, target: UserRow) {
  if (target.role === 'owner' && actor.role !== 'owner') throw new ApiError('forbidden', 'Only an owner can change an owner’s password');
  if (target.id === actor.userId) throw new ApiError('conflict', 'Change your own password on your account page (it asks for your current one)');
}

async function targetUser(ctx: Context, id: string): Promise<UserRow> {
  const user = await findUserById(ctx.deps.db, id);
  if (!user) throw notFound('User');
  return user;
}

/** The user a working link is for (throttled per address: tokens are guessed there). */
async function checkedLink(ctx: Context, token: string) {
  let problem: LinkProblem | null = null;
  const found = await throttled(ctx, 'password-link', undefined, async () => {
    const link = await findLink(ctx.deps.db, token);
    if (link.problem) {
      problem = link.problem;
      return false;
    }
    const user = await findUserById(ctx.deps.db, link.row!.user_id);
    if (!user) {
      problem = 'unknown';
      return false;
    }
    return { link: link.row!, user };
  });
  if (!found) throw linkRefused(problem ?? 'unknown');
  if (found.user.disabled_at) throw new ApiError('conflict', 'This account is disabled; ask an administrator to enable it first');
  return found;
}

const PasswordLink = z.object({ userId: z.string(), url: z.string(), token: z.string(), expiresAt: z.string() }).meta({ id: 'PasswordLink' });

const TAGS = ['Passwords'];

export const passwordRoutes = [
  defineRoute({
    method: 'POST',
    path: '/api/v1/me/password',
    auth: 'session',
    minRole: 'viewer',
    extension: true,
    tags: TAGS,
    summary: 'Change your password (your current one is needed); your other sessions end',
    description:
      'The session that asks continues under a new key (its cookie is replaced and a new CSRF token answered); every other session of the account ends. ' +
      'A wrong current password is 401 `invalid_credential` (naming `currentPassword` in `details.issues`), throttled like sign-in (429 `rate_limited`).',
    body: z.object({ currentPassword: z.string().max(256), newPassword: PasswordSchema }),
    responses: {
      200: { description: 'Changed', data: z.object({ csrfToken: z.string(), otherSessionsEnded: z.int() }) },
      400: { description: 'validation_failed: the new password is too short, too long, or the same as the current one' },
      401: { description: 'invalid_credential: the current password is not right' },
      429: { description: 'rate_limited: too many wrong current passwords' },
    },
    handler: async (ctx, { body, auth }) => {
      const principal = auth as SessionPrincipal;
      const user = await findUserById(ctx.deps.db, principal.userId);
      if (!user) throw new ApiError('unauthenticated', 'Sign in again');
      const passed = await throttled(ctx, 'reauth', user.id, () => verifyPassword(user.password_hash, body.currentPassword));
      if (!passed) {
        throw new ApiError('invalid_credential', 'Your current password is not right', {
          details: { issues: [{ location: 'body', path: ['currentPassword'], message: 'not your current password', code: 'custom' }] },
        });
      }
      if (body.newPassword === body.currentPassword) {
        throw new ApiError('validation_failed', 'Choose a new password that differs from the current one', {
          details: { issues: [{ location: 'body', path: ['newPassword'], message: 'the same as your current password', code: 'custom' }] },
        });
      }
      const passwordHash = await hashPassword(body.newPassword);
      const now = new Date().toISOString();
      const others = await changeOwnPassword(ctx.deps.db, { userId: user.id, sessionId: principal.sessionId, passwordHash, now });
      const session = await startSession(ctx, { userId: user.id, authAt: now });
      return ok({ csrfToken: session.csrf!, otherSessionsEnded: others });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/users/{id}/password',
    auth: 'session',
    minRole: 'admin',
    extension: true,
    tags: TAGS,
    summary: 'Set another user’s password (owners and admins; only owners for owners); their sessions and unused set-password links end',
    params: IdParams,
    body: z.object({ password: PasswordSchema }),
    responses: {
      200: { description: 'The user', data: UserDto },
      400: { description: 'validation_failed: the password is too short or too long' },
      403: { description: 'forbidden: an admin cannot set an owner’s password' },
      409: { description: 'conflict: your own password (change it on your account page)' },
    },
    handler: async (ctx, { params, body, auth }) => {
      const user = await targetUser(ctx, params.id);
      assertMayManage(auth as SessionPrincipal, user);
      const passwordHash = await hashPassword(body.password);
      const updated = await setUserPassword(ctx.deps.db, user.id, passwordHash);
      return ok(toUserDto(updated));
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/users/{id}/password-link',
    auth: 'session',
    minRole: 'admin',
    extension: true,
    tags: TAGS,
    summary: 'Make a one-time link with which the user sets their own password (works once, for 24 hours)',
    description:
      'There is no mail server: hand the link over yourself. The token is shown this once (only its SHA-256 is kept) and rides in the URL fragment ' +
      '(`/set-password#token=...`), which browsers never send to a server. A new link ends the user’s earlier unused ones. Using it does not sign in ' +
      'and does not change second factors; the user’s sessions end.',
    params: IdParams,
    responses: {
      201: { description: 'The link', data: PasswordLink },
      403: { description: 'forbidden: an admin cannot make a link for an owner' },
      409: { description: 'conflict: your own account, or a disabled one' },
    },
    handler: async (ctx, { params, auth }) => {
      const user = await targetUser(ctx, params.id);
      assertMayManage(auth as SessionPrincipal, user);
      if (user.disabled_at) throw new ApiError('conflict', 'This user is disabled; enable them first');
      const token = randomToken(32);
      const now = new Date();
      const expiresAt = new Date(now.getTime() + PASSWORD_LINK_TTL_MS).toISOString();
      await issuePasswordLink(ctx.deps.db, { userId: user.id, token, createdBy: (auth as SessionPrincipal).userId, now: now.toISOString(), expiresAt });
      const base = effectivePublicUrl(ctx.deps.config.publicUrl, await getSettings(ctx.deps.db), `${ctx.protocol}://${ctx.host}`);
      return created({ userId: user.id, url: `${base}${SET_PASSWORD_PATH}#token=${token}`, token, expiresAt });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/auth/password-link/check',
    auth: 'public',
    extension: true,
    tags: TAGS,
    summary: 'Whether a set-password link works, and for whom (the page shows it before asking for a password)',
    description:
      'Throttled per address (429 `rate_limited`). A link that does not work is 401 `invalid_credential` with `details.reason` `unknown`, `used` or `expired`.',
    body: z.object({ token: LinkToken }),
    responses: {
      200: { description: 'The link works', data: z.object({ email: z.string(), displayName: z.string(), expiresAt: z.string() }) },
      401: { description: 'invalid_credential: unknown, used or expired link (details.reason)' },
      409: { description: 'conflict: the account is disabled' },
      429: { description: 'rate_limited' },
    },
    handler: async (ctx, { body }) => {
      const { link, user } = await checkedLink(ctx, body.token);
      return ok({ email: user.email, displayName: user.display_name, expiresAt: link.expires_at });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/auth/password-link/use',
    auth: 'public',
    extension: true,
    tags: TAGS,
    summary: 'Set the password with a one-time link; the link stops working and the user’s sessions end',
    description: 'Does not sign in: the user signs in next with the new password (and their second factor, if they have one). Throttled per address.',
    body: z.object({ token: LinkToken, password: PasswordSchema }),
    responses: {
      200: { description: 'The password is set', data: z.object({ email: z.string() }) },
      400: { description: 'validation_failed: the password is too short or too long (the link still works)' },
      401: { description: 'invalid_credential: unknown, used or expired link (details.reason)' },
      409: { description: 'conflict: the account is disabled' },
      429: { description: 'rate_limited' },
    },
    handler: async (ctx, { body }) => {
      const { link, user } = await checkedLink(ctx, body.token);
      const passwordHash = await hashPassword(body.password);
      const now = new Date().toISOString();
      // The link is spent in the same transaction as the password: of two uses at once exactly one sets it.
      const spent = await usePasswordLink(ctx.deps.db, { linkId: link.id, userId: user.id, passwordHash, now });
      if (!spent) throw linkRefused((await findLink(ctx.deps.db, body.token)).problem ?? 'used');
      return ok({ email: user.email });
    },
  }),
];
