import type { Context } from 'koa';
import type { AppDeps } from '../../platform/app-deps.js';
import { ScopeKey } from '../../platform/app-scope.js';
import type { Db } from '../../platform/db/database.js';
import { isPostgres } from '../../platform/db/dialect.js';
import { DEVICE_TOKEN_PREFIX, type DevicePrincipal } from '../../platform/http/auth.js';
import { ApiError } from '../../platform/http/errors.js';
import { randomToken, safeEqual, sha256Hex } from '../../platform/security/secrets.js';
import {
  type CredentialCheckColumns,
  credentialCheck,
  credentialOwnerRow,
  credentialWithContext,
  credentialWithScreen,
  type DeviceContextRow,
  insertDeviceCredential,
  revokeDeviceCredentials,
  setCredentialLastUsed,
} from './device-auth.repo.js';
import { newId, nowIso, type ScreenRow } from './screens.repo.js';
import { groupCommit } from './group-commit.js';

export type { DeviceContextRow } from './device-auth.repo.js';

const CREDENTIAL_SHAPE = /^svc_device_([A-Za-z0-9_-]{8,64})\.([A-Za-z0-9_-]{20,256})$/;
const TOUCH_EVERY_MS = 60_000;

declare module 'koa' {
  interface DefaultState {
    /** The screen a device credential authenticated (routes with auth kind `device`, except `deviceIdOnly` ones and those of `readsDeviceContextOnly`). */
    screen?: ScreenRow;
    /** On the routes of `readsDeviceContextOnly`: the authenticated screen's context, read with the credential. */
    deviceContext?: DeviceContextRow;
  }
}

export interface ResolvedDevice {
  screen: ScreenRow;
  credentialId: string;
}

/**
 * Checks `svc_device_<public-id>.<secret>` against what `read` answers for its public id (the
 * credential and its screen, one statement): unknown or malformed 401 invalid_credential,
 * revoked 401 credential_revoked, the screen disabled 403 screen_disabled. The secret is
 * compared by its SHA-256 hash in constant time. Touches the credential's last use (once a minute).
 */
async function checkCredential<R extends CredentialCheckColumns>(
  db: Db,
  token: string,
  read: (db: Db, publicId: string) => R | undefined | Promise<R | undefined>,
): Promise<R> {
  const m = CREDENTIAL_SHAPE.exec(token);
  if (!m) throw new ApiError('invalid_credential', 'Malformed device credential');
  const read1 = read(db, m[1]!);
  const row = read1 instanceof Promise ? await read1 : read1;
  if (!row || !safeEqual(row.cred_secret_hash, sha256Hex(m[2]!))) throw new ApiError('invalid_credential', 'Unknown device credential');
  if (row.cred_revoked_at) throw new ApiError('credential_revoked', 'This device credential was revoked; pair the screen again');
  if (row.id === null) throw new ApiError('invalid_credential', 'Unknown device credential');
  if (row.revoked_at) throw new ApiError('credential_revoked', 'This screen was revoked; pair it again');
  if (row.disabled_at) throw new ApiError('screen_disabled', 'This screen is disabled');
  const now = Date.now();
  if (!row.cred_last_used_at || now - Date.parse(row.cred_last_used_at) > TOUCH_EVERY_MS) {
    // Once a minute per credential: on SQLite it shares the heartbeats' commits rather than an
    // fsync of its own; on PostgreSQL one statement needs no transaction (one round trip, not three).
    if (isPostgres(db)) await setCredentialLastUsed(db, row.cred_id, nowIso(now));
    else await groupCommit(db, (trx) => setCredentialLastUsed(trx, row.cred_id, nowIso(now)));
  }
  return row;
}

/** Authenticates a device credential (see checkCredential) and answers its screen's row. */
export async function resolveDeviceCredential(db: Db, token: string): Promise<ResolvedDevice> {
  const {
    cred_id,
    cred_secret_hash: _hash,
    cred_revoked_at: _revoked,
    cred_last_used_at: _used,
    ...screen
  } = await checkCredential(db, token, credentialWithScreen);
  return { screen: screen as ScreenRow, credentialId: cred_id };
}

/** Authenticates a device credential (see checkCredential) and answers its screen's context, not its row. */
export async function resolveDeviceContext(db: Db, token: string): Promise<{ context: DeviceContextRow; credentialId: string }> {
  const context = await checkCredential(db, token, credentialWithContext);
  return { context, credentialId: context.cred_id };
}

/** The paths (GET) whose handlers read the screen's context (`ctx.state.deviceContext`), never its row. */
const CONTEXT_ONLY = new ScopeKey('screens.device-context-routes', () => new Set<string>());

/**
 * A device route (a literal path) whose handler needs the authenticated screen's context only
 * (`ctx.state.deviceContext`: zone, groups, display, revision): its authentication reads that
 * with the credential, in one statement, and no screen row (`screenOf` throws there). Any
 * other path of the route (a trailing slash) gets the row as usual, and no context.
 */
export function readsDeviceContextOnly(deps: AppDeps, path: string): void {
  deps.scope.get(CONTEXT_ONLY).add(path);
}

/**
 * The `device` authenticator (spec's deviceBearer). Sets `ctx.state.screen` to the
 * authenticated screen's row, so any module's player route can declare auth `device`
 * and read it; a route declared `deviceIdOnly` (RouteDef) gets the principal only, its
 * credential read with its screen's id and state, and the paths of `readsDeviceContextOnly`
 * the screen's context.
 */
export function deviceAuthenticator(db: Db) {
  return async (ctx: Context, token: string, idOnly = false): Promise<DevicePrincipal> => {
    if (ctx.deps?.scope.get(CONTEXT_ONLY).has(ctx.path)) {
      const context = await checkCredential(db, token, credentialWithContext);
      ctx.state.deviceContext = context;
      return { kind: 'device', screenId: context.id!, credentialId: context.cred_id };
    }
    if (idOnly) {
      const checked = await checkCredential(db, token, credentialCheck);
      return { kind: 'device', screenId: checked.id!, credentialId: checked.cred_id };
    }
    const { screen, credentialId } = await resolveDeviceCredential(db, token);
    ctx.state.screen = screen;
    return { kind: 'device', screenId: screen.id, credentialId };
  };
}

/** The authenticated screen of a device route (throws if the route is not device-authenticated). */
export function screenOf(ctx: Context): ScreenRow {
  const screen = ctx.state.screen;
  if (!screen) throw new ApiError('unauthenticated', 'This route needs a device credential');
  return screen;
}

/** Issues a new credential for a screen, revoking any earlier one (one credential per screen). */
export async function issueDeviceCredential(db: Db, screenId: string): Promise<string> {
  const publicId = randomToken(12);
  const secret = randomToken(32);
  const now = nowIso();
  await revokeDeviceCredentials(db, screenId, now);
  await insertDeviceCredential(db, {
    id: newId(),
    screen_id: screenId,
    public_id: publicId,
    secret_hash: sha256Hex(secret),
    created_at: now,
    last_used_at: null,
    revoked_at: null,
  });
  return `${DEVICE_TOKEN_PREFIX}${publicId}.${secret}`;
}

/** The screen and row id of a credential this server just issued (`svc_device_<public-id>.<secret>`). */
export async function credentialOwner(db: Db, credential: string): Promise<{ screenId: string; credentialId: string }> {
  const publicId = credential.slice(DEVICE_TOKEN_PREFIX.length).split('.')[0]!;
  const row = await credentialOwnerRow(db, publicId);
  return { screenId: row.screen_id, credentialId: row.id };
}
