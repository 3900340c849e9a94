import type { Context } from 'koa';
import { z } from 'zod';
import type { SessionPrincipal } from '../../platform/http/auth.js';
import { ApiError, notFound } from '../../platform/http/errors.js';
import { created, defineRoute, noContent, ok, uuidParam } from '../../platform/http/route.js';
import { storableJson } from '../../platform/db/json.js';
import { throttled } from './accounts.context.js';
import { verifyPassword } from './passwords.js';
import { registerPasskey, registrationOptions } from './passkeys.js';
import { listUserPasskeys, removePasskey, renamePasskey, userHasPasskey } from './passkeys.repo.js';
import { issueRecoveryCodes, recoveryCodesRemaining } from './recovery-codes.js';
import { checkTotp, consumeTotp, newTotpEnrolment, TOTP_ISSUER } from './totp.js';
import { findUserById, updateUser, type UserRow } from './users.repo.js';

const TAGS = ['Account security'];

const Passkey = z.object({ id: z.string(), name: z.string(), createdAt: z.string(), lastUsedAt: z.string().nullable() }).meta({ id: 'Passkey' });
const Security = z.object({ totpEnabled: z.boolean(), recoveryCodesRemaining: z.number().int(), passkeys: z.array(Passkey) });

async function me(ctx: Context, auth: unknown): Promise<UserRow> {
  const user = await findUserById(ctx.deps.db, (auth as SessionPrincipal).userId);
  if (!user) throw new ApiError('unauthenticated', 'Sign in again');
  return user;
}

const toPasskey = (p: { id: string; name: string; created_at: string; last_used_at: string | null }) => ({
  id: p.id,
  name: p.name,
  createdAt: p.created_at,
  lastUsedAt: p.last_used_at,
});

const isTimeZone = (tz: string) => {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
};
const isLocale = (tag: string) => {
  try {
    return Intl.getCanonicalLocales(tag).length === 1;
  } catch {
    return false;
  }
};

/** Per-user console preferences; every field optional, unknown fields refused. */
export const Preferences = z
  .object({
    theme: z.enum(['system', 'light', 'dark']),
    locale: z.string().max(35).refine(isLocale, 'not a BCP 47 language tag').nullable(),
    timeZone: z.string().max(64).refine(isTimeZone, 'not an IANA time zone').nullable(),
    weekStartsOn: z.enum(['monday', 'sunday', 'saturday']),
    defaultViews: z
      .object({ screens: z.enum(['grid', 'list']), library: z.enum(['grid', 'list']), schedules: z.enum(['week', 'month', 'list']) })
      .partial()
      .strict(),
  })
  .partial()
  .strict()
  .meta({ id: 'Preferences' });
const PREFERENCE_DEFAULTS = { theme: 'system', locale: null, timeZone: null, weekStartsOn: 'monday', defaultViews: {} } as const;

export const meRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/me/security',
    auth: 'session',
    tags: TAGS,
    summary: 'Your second factors',
    responses: { 200: { description: 'TOTP, recovery codes left, passkeys', data: Security } },
    handler: async (ctx, { auth }) => {
      const user = await me(ctx, auth);
      const passkeys = await listUserPasskeys(ctx.deps.db, user.id);
      return ok({
        totpEnabled: user.totp_enabled === 1,
        recoveryCodesRemaining: await recoveryCodesRemaining(ctx.deps.db, user.id),
        passkeys: passkeys.map(toPasskey),
      });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/me/security/totp',
    auth: 'session',
    tags: TAGS,
    summary: 'Start TOTP enrolment: a new secret, its otpauth URI and a QR code',
    description: 'Nothing changes until /totp/confirm receives a valid code.',
    responses: {
      200: { description: 'Enrolment data', data: z.object({ secret: z.string(), otpauthUri: z.string(), qrCodeDataUrl: z.string() }) },
      409: { description: 'conflict: TOTP already on' },
    },
    handler: async (ctx, { auth }) => {
      const user = await me(ctx, auth);
      if (user.totp_enabled) throw new ApiError('conflict', 'TOTP is already on; remove it first to enrol a new one');
      const enrolment = await newTotpEnrolment(ctx.secrets, user, TOTP_ISSUER);
      await updateUser(ctx.deps.db, user.id, { totp_pending_sealed: enrolment.sealed });
      return ok({ secret: enrolment.secret, otpauthUri: enrolment.otpauthUri, qrCodeDataUrl: enrolment.qrCodeDataUrl });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/me/security/totp/confirm',
    auth: 'session',
    tags: TAGS,
    summary: 'Turn TOTP on with a code from the app',
    body: z.object({ code: z.string().max(12) }),
    rateLimited: 'wrong codes, per user',
    responses: {
      409: { description: 'conflict: TOTP is already on, or no enrolment was started' },
      200: { description: 'TOTP on', data: z.object({ totpEnabled: z.literal(true) }) },
      400: { description: 'validation_failed: wrong code' },
    },
    handler: async (ctx, { body, auth }) => {
      const user = await me(ctx, auth);
      if (user.totp_enabled) throw new ApiError('conflict', 'TOTP is already on');
      if (!user.totp_pending_sealed) throw new ApiError('conflict', 'Start enrolment first (POST /api/v1/me/security/totp)');
      const step = await throttled(ctx, 'totp-confirm', user.id, async () => (await checkTotp(ctx.secrets, user.totp_pending_sealed!, body.code)) ?? false);
      if (step === false)
        throw new ApiError('validation_failed', 'That code does not match; check the app’s clock and try the current code', {
          details: { issues: [{ location: 'body', path: ['code'], message: 'wrong code', code: 'custom' }] },
        });
      await updateUser(ctx.deps.db, user.id, {
        totp_enabled: 1,
        totp_secret_sealed: user.totp_pending_sealed,
        totp_pending_sealed: null,
        totp_last_step: step,
      });
      return ok({ totpEnabled: true });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/me/security/totp/remove',
    auth: 'session',
    tags: TAGS,
    summary: 'Turn TOTP off (needs a current code or your password)',
    body: z
      .object({ code: z.string().max(12).optional(), password: z.string().max(256).optional() })
      .refine((b) => (b.code === undefined) !== (b.password === undefined), { message: 'send code or password' }),
    rateLimited: 'wrong codes or passwords, per user',
    responses: {
      409: { description: 'conflict: TOTP is not on' },
      200: { description: 'TOTP off', data: z.object({ totpEnabled: z.literal(false) }) },
      401: { description: 'invalid_credential' },
    },
    handler: async (ctx, { body, auth }) => {
      const user = await me(ctx, auth);
      if (!user.totp_enabled) throw new ApiError('conflict', 'TOTP is not on');
      const passed = await throttled(ctx, 'reauth', user.id, async () =>
        body.code !== undefined ? consumeTotp(ctx.deps.db, ctx.secrets, user, body.code) : verifyPassword(user.password_hash, body.password!),
      );
      if (!passed) throw new ApiError('invalid_credential', 'That code or password is not right');
      await updateUser(ctx.deps.db, user.id, { totp_enabled: 0, totp_secret_sealed: null, totp_pending_sealed: null, totp_last_step: null });
      return ok({ totpEnabled: false });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/me/security/recovery-codes',
    auth: 'session',
    tags: TAGS,
    summary: 'Ten new single-use recovery codes (the old ones stop working); shown once',
    responses: {
      200: { description: 'The codes', data: z.object({ codes: z.array(z.string()).length(10) }) },
      409: { description: 'conflict: no second factor to recover' },
    },
    handler: async (ctx, { auth }) => {
      const user = await me(ctx, auth);
      const hasPasskey = await userHasPasskey(ctx.deps.db, user.id);
      if (!user.totp_enabled && !hasPasskey) throw new ApiError('conflict', 'Turn on TOTP or add a passkey first; recovery codes stand in for them');
      return ok({ codes: await issueRecoveryCodes(ctx.deps.db, ctx.secrets, user.id) });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/me/security/passkeys/options',
    auth: 'session',
    tags: TAGS,
    summary: 'WebAuthn registration options for a new passkey',
    responses: { 200: { description: 'PublicKeyCredentialCreationOptionsJSON', data: z.looseObject({ challenge: z.string() }) } },
    handler: async (ctx, { auth }) => ok(await registrationOptions(ctx, ctx.deps.db, await me(ctx, auth))),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/me/security/passkeys',
    auth: 'session',
    tags: TAGS,
    summary: 'Register a passkey from the authenticator’s response',
    body: z.object({
      response: z.looseObject({ id: z.string().min(1).max(1024), rawId: z.string(), type: z.literal('public-key'), response: z.looseObject({}) }),
      name: z.string().trim().min(1).max(100).optional(),
    }),
    responses: { 409: { description: 'conflict: this passkey is already registered' }, 201: { description: 'The passkey', data: Passkey } },
    handler: async (ctx, { body, auth }) => {
      const user = await me(ctx, auth);
      const row = await registerPasskey(ctx, ctx.deps.db, user, body.response as never, body.name ?? 'Passkey');
      return created(toPasskey(row));
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/api/v1/me/security/passkeys/{id}',
    auth: 'session',
    tags: TAGS,
    summary: 'Rename a passkey',
    params: z.object({ id: uuidParam }),
    body: z.object({ name: z.string().trim().min(1).max(100) }),
    responses: { 200: { description: 'The passkey', data: Passkey } },
    handler: async (ctx, { params, body, auth }) => {
      const user = await me(ctx, auth);
      const row = await renamePasskey(ctx.deps.db, user.id, params.id, body.name);
      if (!row) throw notFound('Passkey');
      return ok(toPasskey(row));
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/me/security/passkeys/{id}/remove',
    auth: 'session',
    tags: TAGS,
    summary: 'Remove a passkey',
    params: z.object({ id: uuidParam }),
    responses: { 204: { description: 'Removed' } },
    handler: async (ctx, { params, auth }) => {
      const user = await me(ctx, auth);
      if (!(await removePasskey(ctx.deps.db, user.id, params.id))) throw notFound('Passkey');
      return noContent();
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/me/preferences',
    auth: 'session',
    tags: ['Preferences'],
    summary: 'Your console preferences (defaults filled in)',
    responses: { 200: { description: 'Preferences', data: Preferences.required() } },
    handler: async (ctx, { auth }) => {
      const user = await me(ctx, auth);
      return ok({ ...PREFERENCE_DEFAULTS, ...(JSON.parse(user.preferences) as object) });
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/api/v1/me/preferences',
    auth: 'session',
    tags: ['Preferences'],
    summary: 'Change some preferences (merged; null resets locale or time zone to the browser’s)',
    body: Preferences,
    responses: { 200: { description: 'Preferences', data: Preferences.required() } },
    handler: async (ctx, { body, auth }) => {
      const user = await me(ctx, auth);
      const current = JSON.parse(user.preferences) as z.infer<typeof Preferences>;
      const merged = { ...current, ...body, ...(body.defaultViews ? { defaultViews: { ...current.defaultViews, ...body.defaultViews } } : {}) };
      await updateUser(ctx.deps.db, user.id, { preferences: storableJson(merged, 'The preferences') });
      return ok({ ...PREFERENCE_DEFAULTS, ...merged });
    },
  }),
];
