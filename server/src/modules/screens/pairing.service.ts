import { randomInt } from 'node:crypto';
import type { AppDeps } from '../../platform/app-deps.js';
import type { Db } from '../../platform/db/database.js';
import type { PairingSessionsTable } from '../../platform/db/schema.js';
import { ApiError, invalidReference, notFound, unknownIdsIn, type Reference } from '../../platform/http/errors.js';
import { randomToken, safeEqual, sha256Hex } from '../../platform/security/secrets.js';
import { issueDeviceCredential } from './device-auth.js';
import { existingGroupIds, joinGroups } from './groups.repo.js';
import { locationExists } from './locations.repo.js';
import {
  countLivePending,
  decidePending,
  findByEnrollmentTokenHash,
  findPairingSession,
  findPendingByCode,
  insertPairingSession,
  liveCodeTaken,
  markEnrolled,
  setEnrollmentTokenHash,
} from './pairing.repo.js';
import { bumpManifestRevision } from './revision.js';
import { asFamily, findScreen, insertScreen, newId, newScreenRow, nowIso, recordHistory, updateScreen } from './screens.repo.js';

/** Codes: 6 characters without look-alikes (no 0/O, 1/I/L). */
export const CODE_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
export const PAIRING_TTL_MS = 15 * 60_000;
export const ENROLLMENT_TTL_MS = 15 * 60_000;
export const POLL_INTERVAL_SEC = 3;
/** Live pending sessions one client address may hold at once. */
export const MAX_PENDING_PER_ADDRESS = 10;

/** `playerFamily` as the pairing and enrolment bodies carry it (PlayerFamilyField: lenient, anything else is recorded as absent). */
type FamilyInput = unknown;

function makeCode(): string {
  let code = '';
  for (let i = 0; i < 6; i++) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  return code;
}

/** Case- and dash-insensitive: `abc-def`, `ABC DEF` and `ABCDEF` are one code. */
export function normalizeCode(input: string): string {
  return input.toUpperCase().replace(/[\s-]+/g, '');
}

export type SessionStatus = 'pending' | 'approved' | 'rejected' | 'expired' | 'enrolled';

export function statusOf(row: { status: string; expires_at: string; enrollment_expires_at: string | null }, now = Date.now()): SessionStatus {
  if (row.status === 'pending' && Date.parse(row.expires_at) <= now) return 'expired';
  if (row.status === 'approved' && row.enrollment_expires_at && Date.parse(row.enrollment_expires_at) <= now) return 'expired';
  return row.status as SessionStatus;
}

export async function pairingSessionOr404(db: Db, id: string): Promise<PairingSessionsTable> {
  const row = await findPairingSession(db, id);
  if (!row) throw notFound('Pairing session');
  return row;
}

/**
 * Starts a pairing session for a player at `address`: 429 while that address holds
 * MAX_PENDING_PER_ADDRESS live pending sessions. The code is unique among live sessions;
 * the poll secret is answered once and stored hashed.
 */
export async function startPairing(
  db: Db,
  address: string,
  input: { playerFamily?: FamilyInput; playerVersion?: string; deviceName?: string },
): Promise<{ id: string; code: string; pollSecret: string; expiresAt: string; pollIntervalSec: number }> {
  const now = Date.now();
  const pollSecret = randomToken(32);
  // One transaction: the count, the code's check and the insert are not overtaken by another
  // request's (a burst from one address gets exactly the cap; two live sessions never share a code).
  const row = await db.transaction().execute(async (trx) => {
    if ((await countLivePending(trx, address, nowIso(now))) >= MAX_PENDING_PER_ADDRESS) {
      throw new ApiError('rate_limited', 'Too many pairing sessions waiting from this address; wait for them to expire', {
        headers: { 'Retry-After': '60' },
      });
    }
    // A code is unique among live sessions.
    let code = makeCode();
    for (let i = 0; i < 20; i++) {
      if (!(await liveCodeTaken(trx, code, nowIso(now)))) break;
      code = makeCode();
    }
    const row: PairingSessionsTable = {
      id: newId(),
      code,
      poll_secret_hash: sha256Hex(pollSecret),
      status: 'pending',
      player_family: asFamily(input.playerFamily),
      player_version: input.playerVersion || null,
      device_name: input.deviceName || null,
      address,
      screen_id: null,
      replaces_screen: 0,
      enrollment_token_hash: null,
      enrollment_expires_at: null,
      decided_by: null,
      created_at: nowIso(now),
      expires_at: nowIso(now + PAIRING_TTL_MS),
      decided_at: null,
      enrolled_at: null,
    };
    await insertPairingSession(trx, row);
    return row;
  });
  return { id: row.id, code: row.code, pollSecret, expiresAt: row.expires_at, pollIntervalSec: POLL_INTERVAL_SEC };
}

/**
 * A player polls its session (404 unknown, 401 without its secret). An approved session
 * answers a fresh enrolment token each time; only the latest works.
 */
export async function pollPairing(
  db: Db,
  id: string,
  secret: string,
): Promise<{ id: string; status: SessionStatus; expiresAt: string; pollIntervalSec: number; enrollmentToken?: string }> {
  const row = await pairingSessionOr404(db, id);
  if (!secret || !safeEqual(row.poll_secret_hash, sha256Hex(secret))) throw new ApiError('invalid_credential', 'Missing or wrong X-Pairing-Secret');
  const status = statusOf(row);
  const base = {
    id: row.id,
    status,
    expiresAt: row.status === 'approved' && row.enrollment_expires_at ? row.enrollment_expires_at : row.expires_at,
    pollIntervalSec: POLL_INTERVAL_SEC,
  };
  if (status !== 'approved') return base;
  const token = randomToken(32);
  await setEnrollmentTokenHash(db, row.id, sha256Hex(token));
  return { ...base, enrollmentToken: token };
}

/**
 * Trades an enrolment token for the screen's device credential (revoking any earlier one),
 * in one transaction; the token works once. False when it is unknown, used or expired.
 */
export async function redeemEnrollmentToken(
  db: Db,
  input: { enrollmentToken: string; playerFamily?: FamilyInput; playerVersion?: string },
): Promise<string | false> {
  const hash = sha256Hex(input.enrollmentToken);
  const row = await findByEnrollmentTokenHash(db, hash);
  if (!row || statusOf(row) !== 'approved' || !row.screen_id) return false;
  const screenId = row.screen_id;
  const credential = await db.transaction().execute(async (trx) => {
    if (!(await markEnrolled(trx, row.id, hash, nowIso()))) return null;
    const family = input.playerFamily !== undefined ? asFamily(input.playerFamily) : row.player_family;
    await updateScreen(trx, screenId, {
      revoked_at: null,
      player_family: family,
      player_architecture: null,
      player_version: input.playerVersion || row.player_version,
      updated_at: nowIso(),
    });
    const cred = await issueDeviceCredential(trx, screenId);
    await recordHistory(trx, screenId, 'enrolled', { playerFamily: family, playerVersion: input.playerVersion || row.player_version });
    return cred;
  });
  return credential ?? false;
}

/** The live pending session showing `code` (any case, dashes or spaces), or false. */
export async function pendingSessionByCode(db: Db, code: string): Promise<PairingSessionsTable | false> {
  if (!/^[A-Z0-9]{6}$/.test(code)) return false;
  return (await findPendingByCode(db, code, nowIso())) ?? false;
}

/**
 * Rejects a pairing session that is still pending (and not expired), in one conditional
 * write: an approve that got there first (or concurrently) wins and this is 409, so a
 * created screen is never left attached to a rejected session. Unknown: 404.
 */
export async function rejectPairingSession(db: Db, id: string, userId: string, now = Date.now()): Promise<void> {
  if (await decidePending(db, id, nowIso(now), { status: 'rejected', decided_by: userId, decided_at: nowIso(now) })) return;
  const row = await findPairingSession(db, id);
  if (!row) throw notFound('Pairing session');
  throw new ApiError('conflict', `The pairing session is ${statusOf(row, now)}, not pending`);
}

export interface Approval {
  name: string;
  locationId?: string | null;
  groupIds?: string[];
  screenId?: string;
}

/**
 * Approves a pending session (404 unknown, 409 no longer pending): creates the screen, or
 * re-pairs `screenId` (its manifest is bumped after), with its location and groups, in one
 * transaction that rolls back when the session was decided meanwhile. Ids in the body that
 * name nothing are 400. Answers the screen's id.
 */
export async function approvePairing(deps: AppDeps, session: PairingSessionsTable, approval: Approval, userId: string): Promise<string> {
  const db = deps.db;
  if (statusOf(session) !== 'pending') throw new ApiError('conflict', `The pairing session is ${statusOf(session)}, not pending`);
  // Ids in the body that name nothing are invalid input (400), unlike the session's path id (404).
  const unknown: Reference[] = [];
  if (approval.locationId && !(await locationExists(db, approval.locationId))) unknown.push({ path: ['locationId'], message: 'no such location' });
  const groupIds = [...new Set(approval.groupIds ?? [])];
  if (groupIds.length) {
    const found = await existingGroupIds(db, groupIds);
    unknown.push(...unknownIdsIn('groupIds', approval.groupIds ?? [], found, 'no such screen group'));
  }
  if (approval.screenId && !(await findScreen(db, approval.screenId))) unknown.push({ path: ['screenId'], message: 'no such screen' });
  if (unknown.length) throw invalidReference(`The approval names what does not exist: ${unknown.map((u) => u.path.join('.')).join(', ')}`, unknown);
  const now = nowIso();
  const screenId = await db.transaction().execute(async (trx) => {
    let id = approval.screenId;
    if (id) {
      await updateScreen(trx, id, { name: approval.name, updated_at: now, ...(approval.locationId !== undefined ? { location_id: approval.locationId } : {}) });
    } else {
      id = newId();
      await insertScreen(
        trx,
        newScreenRow(
          { id, name: approval.name, location_id: approval.locationId ?? null, player_family: session.player_family, player_version: session.player_version },
          now,
        ),
      );
    }
    await joinGroups(trx, id, groupIds, now);
    const decided = await decidePending(trx, session.id, now, {
      status: 'approved',
      screen_id: id,
      replaces_screen: approval.screenId ? 1 : 0,
      decided_by: userId,
      decided_at: now,
      enrollment_expires_at: nowIso(Date.now() + ENROLLMENT_TTL_MS),
    });
    // Rejected (or expired) meanwhile: the transaction rolls back, no screen is created.
    if (!decided) throw new ApiError('conflict', 'The pairing session was decided meanwhile or expired');
    await recordHistory(trx, id, 'paired', { pairingSessionId: session.id, deviceName: session.device_name, by: userId });
    return id;
  });
  if (approval.screenId) await bumpManifestRevision(deps, [screenId]);
  return screenId;
}
