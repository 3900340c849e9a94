import type { Context } from 'koa';
import { z } from 'zod';
import { ApiError } from '../../platform/http/errors.js';
import { created, defineRoute, noContent, ok } from '../../platform/http/route.js';
import { limitAnonymousIssuance, throttled } from './accounts.context.js';
import { hashPassword, PasswordSchema, verifyPassword } from './passwords.js';
import { authenticationOptions, PASSKEY_REFUSED, verifyPasskeyAssertion } from './passkeys.js';
import { findPasskeyByCredentialId, userHasPasskey } from './passkeys.repo.js';
import { recoveryCodesRemaining, spendRecoveryCode } from './recovery-codes.js';
import { approvalsRequired } from '../system/index.js';
import { assertCsrf, endSession, sessionOf, startSession, type SessionData } from './sessions.js';
import { consumeTotp } from './totp.js';
import { countUsers, findUserByEmail, findUserById, insertFirstOwner, normalizeEmail, toUserDto, UserDto, type UserRow } from './users.repo.js';

const TAGS = ['Sign-in'];
const MFA_WINDOW_MS = 10 * 60_000;

const SignedIn = z.object({ user: UserDto, csrfToken: z.string() });
const Email = z.email().max(254);
const PasskeyAssertion = z.looseObject({ id: z.string().min(1).max(1024), rawId: z.string(), type: z.literal('public-key'), response: z.looseObject({}) });
const WebAuthnOptions = z.looseObject({ challenge: z.string() });

type MfaMethod = 'totp' | 'recovery_code' | 'passkey';

/** The second factors a user has; recovery codes count only next to a real factor. */
async function mfaMethods(ctx: Context, user: UserRow): Promise<MfaMethod[]> {
  const methods: MfaMethod[] = [];
  if (user.totp_enabled) methods.push('totp');
  if (await userHasPasskey(ctx.deps.db, user.id)) methods.push('passkey');
  if (methods.length > 0 && (await recoveryCodesRemaining(ctx.deps.db, user.id)) > 0) methods.push('recovery_code');
  return methods;
}

async function signIn(ctx: Context, user: UserRow) {
  const session = await startSession(ctx, { userId: user.id, authAt: new Date().toISOString() });
  return { user: toUserDto(user), csrfToken: session.csrf! };
}

/** A half-signed-in session has 10 minutes to present its second factor. */
const mfaWindowOpen = (session: SessionData) => (session.mfaStartedAt ?? 0) + MFA_WINDOW_MS >= Date.now();

/** The user of a half-signed-in session, or 401 when there is none (or it waited too long). */
async function pendingMfaUser(ctx: Context): Promise<UserRow> {
  const session = sessionOf(ctx);
  if (!session?.userId || !session.mfaPending || !mfaWindowOpen(session)) {
    throw new ApiError('unauthenticated', 'Sign in with your password first');
  }
  const user = await findUserById(ctx.deps.db, session.userId);
  if (!user || user.disabled_at) throw new ApiError('unauthenticated', 'Sign in with your password first');
  return user;
}

export const authRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/auth/status',
    auth: 'public',
    tags: TAGS,
    summary: 'What the console should show: setup, sign-in, MFA, or the signed-in user',
    responses: {
      200: {
        description: 'Sign-in state and the CSRF token for unsafe requests',
        data: z.object({
          setupRequired: z.boolean(),
          authenticated: z.boolean(),
          mfaPending: z.boolean(),
          user: UserDto.nullable(),
          csrfToken: z.string().nullable(),
          approvalsRequired: z
            .boolean()
            .describe('Whether content changes go through submission and approval (the `approvals.required` setting); false until signed in'),
        }),
      },
    },
    handler: async (ctx) => {
      const setupRequired = (await countUsers(ctx.deps.db)) === 0;
      const session = ctx.get('cookie') ? sessionOf(ctx) : undefined;
      const user = session?.userId ? await findUserById(ctx.deps.db, session.userId) : undefined;
      const live = user && !user.disabled_at;
      const mfaPending = Boolean(live && session?.mfaPending && mfaWindowOpen(session));
      const authenticated = Boolean(live && !session?.mfaPending);
      return ok({
        setupRequired,
        authenticated,
        mfaPending,
        user: authenticated ? toUserDto(user!) : null,
        csrfToken: authenticated ? (session!.csrf ?? null) : null,
        approvalsRequired: authenticated ? await approvalsRequired(ctx.deps.db) : false,
      });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/auth/setup',
    auth: 'public',
    tags: TAGS,
    summary: 'Create the first owner (only while no user exists) and sign in',
    body: z.object({ email: Email, password: PasswordSchema, displayName: z.string().trim().min(1).max(100) }),
    responses: { 201: { description: 'The owner, signed in', data: SignedIn }, 409: { description: 'conflict: setup is done' } },
    handler: async (ctx, { body }) => {
      const passwordHash = await hashPassword(body.password);
      const user = await insertFirstOwner(ctx.deps.db, { email: body.email, displayName: body.displayName, passwordHash });
      if (!user) throw new ApiError('conflict', 'Setup is already done; sign in instead');
      return created(await signIn(ctx, user));
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/auth/login',
    auth: 'public',
    tags: TAGS,
    summary: 'Sign in with email and password',
    description:
      'Answers `{user, csrfToken}`, or `{mfaRequired: true, methods}` with a half-signed-in session that only /auth/mfa/* accept. Throttled per account and per address (429 rate_limited with Retry-After).',
    body: z.object({ email: z.string().max(254), password: z.string().max(256) }),
    rateLimited: 'per account and per address',
    responses: {
      200: {
        description: 'Signed in, or the second factor is needed',
        data: z.union([SignedIn, z.object({ mfaRequired: z.literal(true), methods: z.array(z.enum(['totp', 'recovery_code', 'passkey'])) })]),
      },
      401: { description: 'invalid_credential: email or password is wrong (one message for every cause)' },
    },
    handler: async (ctx, { body }) => {
      const email = normalizeEmail(body.email);
      const user = await throttled(ctx, 'login', email, async () => {
        const found = await findUserByEmail(ctx.deps.db, email);
        const good = await verifyPassword(found?.password_hash ?? null, body.password);
        return good && found && !found.disabled_at ? found : false;
      });
      if (!user) throw new ApiError('invalid_credential', 'Email or password is incorrect');
      const methods = await mfaMethods(ctx, user);
      if (methods.length > 0) {
        await startSession(ctx, { userId: user.id, mfaPending: true, mfaStartedAt: Date.now() });
        return ok({ mfaRequired: true, methods });
      }
      return ok(await signIn(ctx, user));
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/auth/logout',
    // Public so a half-signed-in session (password accepted, second factor pending) can
    // end too; the handler asks for a session itself, and a full one needs its CSRF token.
    auth: 'public',
    tags: TAGS,
    summary: 'Sign out: the server-side session is destroyed, so copies of the cookie stop working',
    description: 'Works for a signed-in session (with `X-CSRF-Token`) and for a half-signed-in one (waiting for the second factor).',
    responses: { 204: { description: 'Signed out' }, 401: { description: 'unauthenticated: no session' }, 403: { description: 'csrf_failed' } },
    handler: (ctx) => {
      const session = ctx.get('cookie') ? sessionOf(ctx) : undefined;
      if (!session?.userId) throw new ApiError('unauthenticated', 'There is no session to sign out of');
      if (!session.mfaPending) assertCsrf(ctx, session);
      endSession(ctx);
      return noContent();
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/auth/mfa/verify',
    auth: 'public',
    tags: TAGS,
    summary: 'Finish signing in with a TOTP code, a recovery code or a passkey assertion',
    description: 'Needs the half-signed-in session of /auth/login. Throttled like the password.',
    body: z
      .object({ totp: z.string().max(12).optional(), recoveryCode: z.string().max(32).optional(), passkey: PasskeyAssertion.optional() })
      .refine((b) => [b.totp, b.recoveryCode, b.passkey].filter((v) => v !== undefined).length === 1, {
        message: 'send exactly one of totp, recoveryCode, passkey',
      }),
    rateLimited: 'per account and per address, like the password',
    responses: {
      200: { description: 'Signed in', data: SignedIn },
      401: { description: 'invalid_credential or unauthenticated: the code or assertion is wrong, or there is no half-signed-in session' },
    },
    handler: async (ctx, { body }) => {
      const user = await pendingMfaUser(ctx);
      const { db } = ctx.deps;
      const passed = await throttled(ctx, 'mfa', user.id, async () => {
        if (body.totp !== undefined) return consumeTotp(db, ctx.secrets, user, body.totp);
        if (body.recoveryCode !== undefined) return spendRecoveryCode(db, ctx.secrets, user.id, body.recoveryCode);
        return (await verifyPasskeyAssertion(ctx, db, 'mfa', body.passkey as never, user.id)) === user.id;
      });
      if (!passed) throw new ApiError('invalid_credential', 'That code is not valid (or was already used)');
      return ok(await signIn(ctx, (await findUserById(db, user.id))!));
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/auth/mfa/passkey/options',
    auth: 'public',
    tags: TAGS,
    summary: 'WebAuthn assertion options for the second factor (the half-signed-in user’s passkeys)',
    responses: {
      401: { description: 'unauthenticated: no half-signed-in session (sign in with the password first)' },
      200: { description: 'PublicKeyCredentialRequestOptionsJSON', data: WebAuthnOptions },
    },
    handler: async (ctx) => {
      const user = await pendingMfaUser(ctx);
      return ok(await authenticationOptions(ctx, ctx.deps.db, 'mfa', user.id));
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/auth/passkey/login/options',
    auth: 'public',
    tags: TAGS,
    summary: 'WebAuthn assertion options for passwordless sign-in (any discoverable passkey)',
    description: 'The challenge is kept in a (new, anonymous) session, so this is limited per address: 60 in 15 minutes (429 rate_limited with Retry-After).',
    rateLimited: '60 per address in 15 minutes',
    responses: { 200: { description: 'PublicKeyCredentialRequestOptionsJSON', data: WebAuthnOptions } },
    handler: async (ctx) => {
      await limitAnonymousIssuance(ctx, 'passkey-options');
      return ok(await authenticationOptions(ctx, ctx.deps.db, 'login'));
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/auth/passkey/login',
    auth: 'public',
    tags: TAGS,
    summary: 'Passwordless sign-in with a passkey assertion (user verification required)',
    body: z.object({ response: PasskeyAssertion }),
    rateLimited: 'per address and per account',
    responses: { 200: { description: 'Signed in', data: SignedIn }, 401: { description: 'invalid_credential' } },
    handler: async (ctx, { body }) => {
      // Throttled per address and per account: the user owning the presented credential
      // id (an unknown id counts against the address only).
      const owner = (await findPasskeyByCredentialId(ctx.deps.db, body.response.id))?.user_id;
      const user = await throttled(ctx, 'passkey', owner, async () => {
        const found = await findUserById(ctx.deps.db, await verifyPasskeyAssertion(ctx, ctx.deps.db, 'login', body.response as never));
        return found && !found.disabled_at ? found : false;
      });
      if (!user) throw new ApiError('invalid_credential', PASSKEY_REFUSED);
      return ok(await signIn(ctx, user));
    },
  }),
];
