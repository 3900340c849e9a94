import type { AuthenticationResponseJSON, AuthenticatorTransport, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { Context } from 'koa';
import type { Db } from '../../platform/db/database.js';
import { ApiError } from '../../platform/http/errors.js';
import { storableJson } from '../../platform/db/json.js';
import { findPasskeyByCredentialId, insertPasskey, recordPasskeyUse, userPasskeyCredentials, type PasskeyRow } from './passkeys.repo.js';
import { sessionOf, type SessionData } from './sessions.js';
import { newId, type UserRow } from './users.repo.js';

/**
 * @simplewebauthn/server (and its CBOR, ASN.1 and crypto libraries, ~4 MiB of heap) loads at
 * the first passkey ceremony, not at start: most servers never see one (docs/performance.md,
 * "Idle memory"). Node keeps the module once loaded.
 */
const webauthn = () => import('@simplewebauthn/server');

export const CHALLENGE_TTL_MS = 5 * 60_000;
const RP_NAME = 'Placard';
/** One message for every refused assertion: which check failed is for the debug log only. */
export const PASSKEY_REFUSED = 'The passkey was not accepted';

/** RP ID and origin: from PLACARD_PUBLIC_URL when set, else from the request's host. */
export function relyingParty(ctx: Context): { rpID: string; origin: string } {
  const publicUrl = ctx.deps.config.publicUrl;
  if (publicUrl) {
    const u = new URL(publicUrl);
    return { rpID: u.hostname, origin: u.origin };
  }
  return { rpID: ctx.hostname, origin: `${ctx.protocol}://${ctx.host}` };
}

function remember(ctx: Context, challenge: string, purpose: NonNullable<SessionData['webauthn']>['purpose']) {
  sessionOf(ctx).webauthn = { challenge, purpose, expiresAt: Date.now() + CHALLENGE_TTL_MS };
}

/** Takes the outstanding challenge for `purpose` out of the session: it works once. */
function takeChallenge(ctx: Context, purpose: NonNullable<SessionData['webauthn']>['purpose']): string {
  const session = sessionOf(ctx);
  const pending = session.webauthn;
  delete session.webauthn;
  if (!pending || pending.purpose !== purpose || pending.expiresAt < Date.now()) {
    throw new ApiError('invalid_credential', 'No passkey challenge is pending (or it expired); ask for new options');
  }
  return pending.challenge;
}

const parseTransports = (json: string) => JSON.parse(json) as AuthenticatorTransport[];

export async function registrationOptions(ctx: Context, db: Db, user: UserRow) {
  const existing = await userPasskeyCredentials(db, user.id);
  const { rpID } = relyingParty(ctx);
  const options = await (await webauthn()).generateRegistrationOptions({
    rpName: RP_NAME,
    rpID,
    userName: user.email,
    userDisplayName: user.display_name,
    userID: new TextEncoder().encode(user.id),
    attestationType: 'none',
    excludeCredentials: existing.map((p) => ({ id: p.credential_id, transports: parseTransports(p.transports) })),
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
  });
  remember(ctx, options.challenge, 'register');
  return options;
}

export async function registerPasskey(ctx: Context, db: Db, user: UserRow, response: RegistrationResponseJSON, name: string) {
  const expectedChallenge = takeChallenge(ctx, 'register');
  const { rpID, origin } = relyingParty(ctx);
  let verification;
  try {
    verification = await (await webauthn()).verifyRegistrationResponse({
      response,
      expectedChallenge,
      expectedOrigin: origin,
      expectedRPID: rpID,
      requireUserVerification: false,
    });
  } catch (err) {
    ctx.state.log?.debug({ err: (err as Error).message }, 'passkey registration refused');
    throw new ApiError('validation_failed', 'The passkey could not be verified');
  }
  if (!verification.verified || !verification.registrationInfo) throw new ApiError('validation_failed', 'The passkey could not be verified');
  const info = verification.registrationInfo;
  const taken = await findPasskeyByCredentialId(db, info.credential.id);
  if (taken) throw new ApiError('conflict', 'This passkey is already registered');
  const row: PasskeyRow = {
    id: newId(),
    user_id: user.id,
    credential_id: info.credential.id,
    public_key: Buffer.from(info.credential.publicKey),
    counter: info.credential.counter,
    transports: storableJson(info.credential.transports ?? response.response.transports ?? [], 'transports'),
    device_type: info.credentialDeviceType,
    backed_up: info.credentialBackedUp ? 1 : 0,
    name,
    created_at: new Date().toISOString(),
    last_used_at: null,
  };
  await insertPasskey(db, row);
  return row;
}

/** Options for a passkey assertion: the user's passkeys (second factor) or any discoverable one (passwordless). */
export async function authenticationOptions(ctx: Context, db: Db, purpose: 'mfa' | 'login', userId?: string) {
  const allow = userId ? await userPasskeyCredentials(db, userId) : [];
  const { rpID } = relyingParty(ctx);
  const options = await (await webauthn()).generateAuthenticationOptions({
    rpID,
    userVerification: purpose === 'login' ? 'required' : 'preferred',
    allowCredentials: allow.map((p) => ({ id: p.credential_id, transports: parseTransports(p.transports) })),
  });
  remember(ctx, options.challenge, purpose);
  return options;
}

/**
 * Verifies an assertion against the stored passkey (signature, challenge, origin, RP ID,
 * sign counter) and answers the user it belongs to; `userId` restricts it (second factor).
 */
export async function verifyPasskeyAssertion(
  ctx: Context,
  db: Db,
  purpose: 'mfa' | 'login',
  response: AuthenticationResponseJSON,
  userId?: string,
): Promise<string> {
  const expectedChallenge = takeChallenge(ctx, purpose);
  const refused = (reason: string) => {
    ctx.state.log?.debug({ purpose, reason }, 'passkey assertion refused');
    return new ApiError('invalid_credential', PASSKEY_REFUSED);
  };
  const passkey = await findPasskeyByCredentialId(db, response?.id);
  if (!passkey) throw refused('unknown credential id');
  if (userId && passkey.user_id !== userId) throw refused('the credential belongs to another user');
  const { rpID, origin } = relyingParty(ctx);
  let verification;
  try {
    verification = await (await webauthn()).verifyAuthenticationResponse({
      response,
      expectedChallenge,
      expectedOrigin: origin,
      expectedRPID: rpID,
      requireUserVerification: purpose === 'login',
      credential: {
        id: passkey.credential_id,
        publicKey: new Uint8Array(passkey.public_key),
        counter: passkey.counter,
        transports: parseTransports(passkey.transports),
      },
    });
  } catch (err) {
    throw refused((err as Error).message);
  }
  if (!verification.verified) throw refused('not verified');
  await recordPasskeyUse(db, passkey.id, {
    counter: verification.authenticationInfo.newCounter,
    backedUp: verification.authenticationInfo.credentialBackedUp,
  });
  return passkey.user_id;
}
