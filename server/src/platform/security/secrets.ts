import { createCipheriv, createDecipheriv, hash, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** A random token of `bytes` bytes from the CSPRNG, base64url (32 bytes = 256 bits). */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** One-shot (crypto.hash, Node >= 20.12): a third of createHash's cost, and every device request hashes its secret. */
export function sha256Hex(value: string | Buffer): string {
  return hash('sha256', value, 'hex');
}

/** Constant-time comparison of two strings (false on different lengths). */
export function safeEqual(a: string, b: string): boolean {
  const ba = Buffer.from(a);
  const bb = Buffer.from(b);
  return ba.length === bb.length && timingSafeEqual(ba, bb);
}

/**
 * The installation's root secret: `secret.key` in the data directory (0600), made on
 * first start. Session cookie signing keys and the key that encrypts TOTP secrets at
 * rest are derived from it, so backing up the data directory keeps sessions and MFA.
 */
export class ServerSecrets {
  private readonly root: Buffer;

  constructor(dataDir: string) {
    const file = path.join(dataDir, 'secret.key');
    if (!existsSync(file)) {
      mkdirSync(dataDir, { recursive: true });
      try {
        writeFileSync(file, `${randomBytes(64).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
    }
    const hex = readFileSync(file, 'utf8').trim();
    if (!/^[0-9a-f]{64,}$/.test(hex)) throw new Error(`${file} is not a Placard secret key`);
    this.root = Buffer.from(hex, 'hex');
  }

  derive(purpose: string, length = 32): Buffer {
    return Buffer.from(hkdfSync('sha256', this.root, Buffer.alloc(0), `placard:${purpose}`, length));
  }

  /** AES-256-GCM, for secrets that must be read back (TOTP seeds): `v1.<iv>.<tag>.<data>`. */
  seal(purpose: string, plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.derive(`seal:${purpose}`), iv);
    const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), data.toString('base64url')].join('.');
  }

  open(purpose: string, sealed: string): string {
    const [version, iv, tag, data] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || data === undefined) throw new Error('not a sealed value');
    const decipher = createDecipheriv('aes-256-gcm', this.derive(`seal:${purpose}`), Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
  }
}
