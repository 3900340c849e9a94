import type Koa from 'koa';
import type { Context, Middleware } from 'koa';
import type { AppDeps } from '../../platform/app-deps.js';
import type { Db } from '../../platform/db/database.js';
import type { SessionPrincipal } from '../../platform/http/auth.js';
import { ApiError } from '../../platform/http/errors.js';
import { randomToken, safeEqual, sha256Hex } from '../../platform/security/secrets.js';
import { deleteExpiredSessions, deleteSession, findSession, findUserById, saveSession, touchSession } from './users.repo.js';

export const SESSION_COOKIE = 'placard.sid';
export const CSRF_HEADER = 'x-csrf-token';

/** What a console session holds (server-side only; the cookie carries a random key). */
export interface SessionData {
  userId?: string;
  /** Password accepted, second factor pending: only /auth/mfa/* accept this session. */
  mfaPending?: boolean;
  mfaStartedAt?: number;
  csrf?: string;
  authAt?: string;
  /** An outstanding WebAuthn challenge: single use, expiring. */
  webauthn?: { challenge: string; purpose: 'register' | 'mfa' | 'login'; expiresAt: number };
}

declare module 'koa' {
  interface DefaultState {
    sessionRowId?: string;
  }
}

/** last_seen_at is written at most this often, and at least four times per idle period. */
const TOUCH_EVERY_MS = 60_000;

/**
 * koa-session's external store in SQLite. Rows are keyed by the SHA-256 of the cookie's
 * key, so a database copy does not hold live session keys. Idle and absolute expiry are
 * enforced here, on every read.
 */
export class SqliteSessionStore {
  private readonly touchEveryMs: number;

  constructor(
    private readonly db: Db,
    private readonly idleMs: number,
    private readonly maxMs: number,
  ) {
    this.touchEveryMs = Math.min(TOUCH_EVERY_MS, Math.floor(idleMs / 4));
  }

  async get(key: string, _maxAge: unknown, { ctx }: { ctx: Context }): Promise<SessionData | undefined> {
    const id = sha256Hex(key);
    const row = await findSession(this.db, id);
    if (!row) return undefined;
    const now = Date.now();
    if (Date.parse(row.expires_at) <= now || Date.parse(row.last_seen_at) + this.idleMs <= now) {
      await deleteSession(this.db, id);
      return undefined;
    }
    if (now - Date.parse(row.last_seen_at) > this.touchEveryMs) {
      await touchSession(this.db, id, new Date(now).toISOString());
    }
    ctx.state.sessionRowId = id;
    return JSON.parse(row.data) as SessionData;
  }

  async set(key: string, data: SessionData & Record<string, unknown>, _maxAge: unknown, { ctx }: { ctx: Context }): Promise<void> {
    const id = sha256Hex(key);
    const now = new Date();
    await saveSession(this.db, {
      id,
      user_id: data.userId ?? null,
      data: JSON.stringify(data),
      created_at: now.toISOString(),
      last_seen_at: now.toISOString(),
      expires_at: new Date(now.getTime() + this.maxMs).toISOString(),
    });
    ctx.state.sessionRowId = id;
  }

  async destroy(key: string): Promise<void> {
    await deleteSession(this.db, sha256Hex(key));
  }

  async prune(): Promise<void> {
    const now = Date.now();
    await deleteExpiredSessions(this.db, new Date(now).toISOString(), new Date(now - this.idleMs).toISOString());
  }
}

/** Installs koa-session (cookie `placard.sid`, HttpOnly, SameSite=Lax, Secure behind HTTPS). */
export function installSessions(app: Koa, deps: AppDeps, signingKey: string): SqliteSessionStore {
  const store = new SqliteSessionStore(deps.db, deps.config.sessionIdleMs, deps.config.sessionMaxMs);
  app.keys = [signingKey];
  // Secure when the public URL is https (a TLS proxy in front; the process itself speaks
  // plain HTTP) or when the request itself is secure (ctx.secure, which honours
  // PLACARD_TRUST_PROXY and X-Forwarded-Proto). koa-session gets no `secure` option, so
  // the cookies library follows its own idea of the connection; for the public-URL case
  // it is told the connection is secure, else it refuses to send a Secure cookie
  // ("Cannot send secure cookie over unencrypted connection", a 500 on every sign-in).
  const httpsPublicUrl = /^https:\/\//i.test(deps.config.publicUrl ?? '');
  if (httpsPublicUrl) {
    app.use(async (ctx, next) => {
      ctx.cookies.secure = true;
      await next();
    });
  }
  // koa-session (with the copy of zod 3 it validates its options with: ~1.1 MiB of heap)
  // loads at the first request that needs a session, not at start (issue 24, idle memory).
  // It then defines `ctx.session` on app.context, which every context inherits, earlier ones included.
  let sessions: Middleware | null = null;
  let loading: Promise<Middleware> | null = null;
  const load = () =>
    (loading ??= import('koa-session').then(({ createSession }) => {
      sessions = createSession(
        {
          key: SESSION_COOKIE,
          maxAge: deps.config.sessionMaxMs,
          httpOnly: true,
          sameSite: 'lax',
          signed: true,
          rolling: false,
          renew: false,
          store: store as never,
          genid: () => randomToken(32),
        },
        app,
      ) as unknown as Middleware;
      return sessions;
    })).catch((err: unknown) => {
      loading = null; // the next request tries again
      throw err;
    });
  // koa-session gives every request a session, and a request without a cookie a new random
  // id it never saves: a CSPRNG call on /healthz, every heartbeat and every static file
  // (issue 24's profile: a tenth of a /healthz request's server time). Only
  // a request carrying the cookie, or one to /api/v1/auth/ (sign-in, MFA, passkey challenges:
  // the routes that start a session), needs it; elsewhere `ctx.session` still works lazily
  // once koa-session is loaded (a fresh, unsaved session), and the session authenticator
  // answers null without the cookie.
  const needsSession = (ctx: Context) => ctx.path.startsWith('/api/v1/auth/') || ctx.get('cookie').includes(`${SESSION_COOKIE}=`);
  app.use((ctx, next) => {
    if (!needsSession(ctx)) return next();
    if (sessions) return sessions(ctx, next);
    return load().then((loaded) => loaded(ctx, next));
  });
  deps.periodic.every('sessions.prune', 15 * 60_000, () => store.prune());
  return store;
}

export function sessionOf(ctx: Context): SessionData {
  return ctx.session as unknown as SessionData;
}

/**
 * Starts a new session for `data` under a new key: the old key (fixation) is destroyed.
 * Used on sign-in, on MFA completion and when the user's privileges change.
 */
export async function startSession(ctx: Context, data: SessionData): Promise<SessionData> {
  const session = ctx.session as unknown as Record<string, unknown> & { regenerate(): Promise<void> };
  for (const key of Object.keys(session)) if (!key.startsWith('_')) delete session[key];
  Object.assign(session, { ...data, csrf: data.csrf ?? randomToken(32) });
  await session.regenerate();
  return session as SessionData;
}

export function endSession(ctx: Context): void {
  ctx.session = null;
}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** 403 csrf_failed unless the request carries the session's CSRF token. */
export function assertCsrf(ctx: Context, session: SessionData): void {
  const sent = ctx.get(CSRF_HEADER);
  if (!session.csrf || !sent || !safeEqual(sent, session.csrf)) {
    throw new ApiError('csrf_failed', `Send the session's CSRF token in ${CSRF_HEADER} (GET /api/v1/auth/status gives it)`);
  }
}

/** The `session` authenticator: a live, fully signed-in session of an enabled user, CSRF on unsafe methods. */
export function sessionAuthenticator(db: Db) {
  return async (ctx: Context): Promise<SessionPrincipal | null> => {
    if (!ctx.get('cookie')) return null;
    const session = sessionOf(ctx);
    if (!session?.userId) return null;
    if (session.mfaPending) throw new ApiError('mfa_required', 'Finish signing in with your second factor');
    const user = await findUserById(db, session.userId);
    if (!user || user.disabled_at) {
      endSession(ctx);
      return null;
    }
    if (UNSAFE.has(ctx.method)) assertCsrf(ctx, session);
    return { kind: 'session', userId: user.id, role: user.role, sessionId: ctx.state.sessionRowId ?? '' };
  };
}
