import argon2 from 'argon2';
import { z } from 'zod';

/** argon2id at OWASP's recommended minimum (19 MiB, 2 passes, 1 lane) or stronger. */
const OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export const PasswordSchema = z.string().min(12, 'at least 12 characters').max(256, 'at most 256 characters');

export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, OPTIONS);
}

/** A hash of nothing anyone knows, checked when the account does not exist so timing does not tell. */
let decoy: Promise<string> | null = null;

export async function verifyPassword(hash: string | null, password: string): Promise<boolean> {
  if (!hash) {
    decoy ??= hashPassword(`decoy-${Math.random()}`);
    await argon2.verify(await decoy, password).catch(() => false);
    return false;
  }
  try {
    return await argon2.verify(hash, password);
  } catch {
    return false;
  }
}
