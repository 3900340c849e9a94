import type { Context } from 'koa';
import type { Db } from '../../platform/db/database.js';
import { DEVICE_TOKEN_PREFIX, type DevicePrincipal } from '../../platform/http/auth.js';
import { ApiError } from '../../platform/http/errors.js';
import { randomToken, safeEqual, sha256Hex } from '../../platform/security/secrets.js';
import { credentialOwnerRow, findCredentialByPublicId, insertDeviceCredential, revokeDeviceCredentials, setCredentialLastUsed } from './device-auth.repo.js';
import { findScreen, newId, nowIso, type ScreenRow } from './screens.repo.js';
import { groupCommit } from './group-commit.js';

const CREDENTIAL_SHAPE = /^svc_device_([A-Za-z0-9_-]{8,64})\.([A-Za-z0-9_-]{20,256})$/;
const TOUCH_EVERY_MS = 60_000;

declare module 'koa' {
  interface DefaultState {
    /** The screen a device credential authenticated (routes with auth kind `device`). */
    screen?: ScreenRow;
  }
}

export interface ResolvedDevice {
  screen: ScreenRow;
  credentialId: string;
}

/**
 * Checks `svc_device_<public-id>.<secret>`: unknown or malformed 401 invalid_credential,
 * revoked 401 credential_revoked, the screen disabled 403 screen_disabled. The secret is
 * compared by its SHA-256 hash in constant time.
 */
export async function resolveDeviceCredential(db: Db, token: string): Promise<ResolvedDevice> {
  const m = CREDENTIAL_SHAPE.exec(token);
  if (!m) throw new ApiError('invalid_credential', 'Malformed device credential');
  const cred = await findCredentialByPublicId(db, m[1]!);
  if (!cred || !safeEqual(cred.secret_hash, sha256Hex(m[2]!))) throw new ApiError('invalid_credential', 'Unknown device credential');
  if (cred.revoked_at) throw new ApiError('credential_revoked', 'This device credential was revoked; pair the screen again');
  const screen = await findScreen(db, cred.screen_id);
  if (!screen) throw new ApiError('invalid_credential', 'Unknown device credential');
  if (screen.revoked_at) throw new ApiError('credential_revoked', 'This screen was revoked; pair it again');
  if (screen.disabled_at) throw new ApiError('screen_disabled', 'This screen is disabled');
  const now = Date.now();
  if (!cred.last_used_at || now - Date.parse(cred.last_used_at) > TOUCH_EVERY_MS) {
    // Once a minute per credential: shares the heartbeats' commits rather than an fsync of its own.
    await groupCommit(db, (trx) => setCredentialLastUsed(trx, cred.id, nowIso(now)));
  }
  return { screen, credentialId: cred.id };
}

/**
 * The `device` authenticator (spec's deviceBearer). Sets `ctx.state.screen` to the
 * authenticated screen's row, so any module's player route can declare auth `device`
 * and read it.
 */
export function deviceAuthenticator(db: Db) {
  return async (ctx: Context, token: string): Promise<DevicePrincipal> => {
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
