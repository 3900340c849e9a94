import { createHmac, randomInt } from 'node:crypto';
import type { Db } from '../../platform/db/database.js';
import type { ServerSecrets } from '../../platform/security/secrets.js';
import { countUnusedRecoveryCodes, newId, replaceRecoveryCodes, spendRecoveryCodeHash } from './users.repo.js';

const ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789'; // no 0/o, 1/l/i
const COUNT = 10;

function oneCode(): string {
  const chars = Array.from({ length: 10 }, () => ALPHABET[randomInt(ALPHABET.length)]);
  return `${chars.slice(0, 5).join('')}-${chars.slice(5).join('')}`;
}

const normalize = (code: string) => code.toLowerCase().replace(/[^a-z0-9]/g, '');

/** HMAC with a key derived from secret.key: a stolen database alone cannot be brute-forced. */
function hashCode(secrets: ServerSecrets, code: string): string {
  return createHmac('sha256', secrets.derive('recovery-codes')).update(normalize(code)).digest('hex');
}

/** Replaces the user's codes with ten new ones; answers them (shown once, stored hashed). */
export async function issueRecoveryCodes(db: Db, secrets: ServerSecrets, userId: string): Promise<string[]> {
  const codes = Array.from({ length: COUNT }, oneCode);
  const now = new Date().toISOString();
  await replaceRecoveryCodes(
    db,
    userId,
    codes.map((c) => ({ id: newId(), user_id: userId, code_hash: hashCode(secrets, c), used_at: null, created_at: now })),
  );
  return codes;
}

/** Spends a code: true once, false after (or for a wrong code). */
export async function spendRecoveryCode(db: Db, secrets: ServerSecrets, userId: string, code: string): Promise<boolean> {
  if (normalize(code).length !== 10) return false;
  return spendRecoveryCodeHash(db, userId, hashCode(secrets, code), new Date().toISOString());
}

export async function recoveryCodesRemaining(db: Db, userId: string): Promise<number> {
  return countUnusedRecoveryCodes(db, userId);
}
