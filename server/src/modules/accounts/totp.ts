import type { Db } from '../../platform/db/database.js';
import type { ServerSecrets } from '../../platform/security/secrets.js';
import { advanceTotpStep, type UserRow } from './users.repo.js';

const SEAL = 'totp';
/** otplib and qrcode load at the first enrolment or check, not at start (docs/performance.md, "Idle memory"). */
const otp = () => import('otplib');
const qrcode = async () => (await import('qrcode')).default;

export const TOTP_ISSUER = 'Placard';

/** A new base32 secret (30 s, 6 digits, SHA-1: what every authenticator app reads). */
export async function newTotpEnrolment(secrets: ServerSecrets, user: UserRow, issuer: string) {
  const { generateSecret, generateURI } = await otp();
  const secret = generateSecret();
  const otpauthUri = generateURI({ issuer, label: user.email, secret });
  const qrCodeDataUrl = await (await qrcode()).toDataURL(otpauthUri, { errorCorrectionLevel: 'M', margin: 1, width: 256 });
  return { secret, sealed: secrets.seal(SEAL, secret), otpauthUri, qrCodeDataUrl };
}

const isCode = (code: string) => /^\d{6}$/.test(code);

/** Checks a code against a sealed secret, one step of clock drift either way; answers its time step. */
export async function checkTotp(secrets: ServerSecrets, sealed: string, code: string, afterTimeStep?: number | null): Promise<number | null> {
  const token = code.replace(/\s+/g, '');
  if (!isCode(token)) return null;
  const secret = secrets.open(SEAL, sealed);
  const epoch = Math.floor(Date.now() / 1000);
  const current = Math.floor(epoch / 30);
  // The last accepted step is ahead of every step in the window (the clock went back):
  // no code can be newer, so this is a failed code. otplib would throw here.
  if (afterTimeStep != null && afterTimeStep >= current + 1) return null;
  const { verify } = await otp();
  try {
    const result = await verify({ secret, token, epoch, epochTolerance: 30, ...(afterTimeStep != null ? { afterTimeStep } : {}) });
    return result.valid ? current + result.delta : null;
  } catch {
    return null; // whatever else otplib refuses is a failed code, never a 500
  }
}

/**
 * Verifies the user's enabled TOTP and consumes the time step atomically: the same code
 * (or an older one) never works twice, even for two requests racing each other.
 */
export async function consumeTotp(db: Db, secrets: ServerSecrets, user: UserRow, code: string): Promise<boolean> {
  if (!user.totp_enabled || !user.totp_secret_sealed) return false;
  const step = await checkTotp(secrets, user.totp_secret_sealed, code, user.totp_last_step);
  if (step === null) return false;
  return advanceTotpStep(db, user.id, step);
}
