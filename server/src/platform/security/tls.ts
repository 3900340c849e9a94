import { createHash, createPrivateKey, createPublicKey, randomBytes, webcrypto, X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createSecureContext } from 'node:tls';

/**
 * The server's own HTTPS identity (docs/trust.md).
 *
 * Generated: `<data>/tls/server.key` (ECDSA P-256, 0600) with a self-signed certificate
 * `<data>/tls/server.crt` naming every address screens may use, plus `<data>/tls/next.key`,
 * the key the server will move to at the next rotation. Screens pin the public keys (SPKI
 * SHA-256) of both, so a rotation does not cut them off. The certificate is re-issued with
 * the same key when the names change (a new LAN address, a new public URL): the pins stay.
 *
 * Provided: PLACARD_TLS_CERT and PLACARD_TLS_KEY (PEM; the certificate file may hold the
 * chain after the leaf). Screens pin the leaf's key only.
 */

export interface TlsIdentity {
  /** PEM key and certificate (chain) for `https.createServer`. */
  key: string;
  cert: string;
  source: 'generated' | 'provided';
  /** SHA-256 of the leaf certificate's DER, upper-case hex pairs joined by ':' (what browsers show). */
  fingerprintSha256: string;
  /** base64 SHA-256 of the public keys screens accept: the current key first, then the next one (generated only). */
  spkiSha256: string[];
  /** curl's --pinnedpubkey argument: `sha256//<current>;sha256//<next>`. */
  pin: string;
  subjectAltNames: string[];
  notAfter: string;
  /** Where the files are (for messages and docs). */
  certFile: string;
  keyFile: string;
}

export class TlsError extends Error {
  override name = 'TlsError';
}

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
/** Pinned clients (curl, the kiosk) ignore expiry; browsers of people who accepted it once see it expire after this long. */
const VALIDITY_DAYS = 825;
/** Re-issued this long before it expires (at a start). */
const RENEW_BEFORE_DAYS = 30;

/**
 * @peculiar/x509 (with reflect-metadata, tsyringe and the ASN.1 schemas: ~2.5 MiB of heap)
 * is needed only to issue a certificate (first start, a new name, a rotation): it loads then,
 * not at every start (docs/performance.md, "Idle memory").
 */
async function x509Library() {
  await import('reflect-metadata'); // @peculiar/x509's dependency injection needs it loaded first
  const x509 = await import('@peculiar/x509');
  x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
  return x509;
}

/** base64 SHA-256 of a PEM key's SubjectPublicKeyInfo (a private or public key). */
export function spkiSha256(pemKey: string): string {
  const der = createPublicKey(pemKey).export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(der).digest('base64');
}

function fingerprintOf(cert: X509Certificate): string {
  return cert.fingerprint256.toUpperCase();
}

/** The names a generated certificate carries: the public host, localhost, this machine's name and its addresses. */
export function defaultNames(publicHosts: readonly string[] = []): string[] {
  const names = new Set<string>(['localhost', '127.0.0.1', '::1']);
  for (const h of publicHosts) if (h) names.add(canonicalName(h));
  const host = os.hostname().toLowerCase();
  if (host && /^[a-z0-9.-]+$/.test(host)) {
    names.add(host);
    if (!host.includes('.')) names.add(`${host}.local`);
  }
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? []) {
      if (a.internal) continue;
      if (a.family === 'IPv6' && a.scopeid) continue; // link-local: needs a zone, useless in a URL
      names.add(canonicalName(a.address));
    }
  }
  return [...names].sort();
}

function writePrivate(file: string, body: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, body, { mode: 0o600 });
  renameSync(tmp, file);
}

async function newKeyPem(): Promise<string> {
  const keys = await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }).export({ type: 'pkcs8', format: 'pem' }).toString();
}

async function issue(keyPem: string, names: string[]): Promise<string> {
  const x509 = await x509Library();
  const priv = createPrivateKey(keyPem);
  const privateKey = await webcrypto.subtle.importKey('pkcs8', priv.export({ type: 'pkcs8', format: 'der' }), ALG, false, ['sign']);
  const publicKey = await webcrypto.subtle.importKey('spki', createPublicKey(priv).export({ type: 'spki', format: 'der' }), ALG, true, ['verify']);
  const notBefore = new Date(Date.now() - 24 * 3_600_000);
  const notAfter = new Date(Date.now() + VALIDITY_DAYS * 24 * 3_600_000);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: `01${randomBytes(15).toString('hex')}`,
    name: `CN=Placard server ${os.hostname().replace(/[,=+<>#;"\\]/g, '') || 'localhost'}`,
    notBefore,
    notAfter,
    signingAlgorithm: ALG,
    keys: { privateKey, publicKey },
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth], false),
      new x509.SubjectAlternativeNameExtension(names.map((n) => (isIP(n) ? { type: 'ip', value: n } : { type: 'dns', value: n }))),
      await x509.SubjectKeyIdentifierExtension.create(publicKey),
    ],
  });
  return cert.toString('pem');
}

/** One spelling per name: lower case; IPv6 compressed (Node prints SANs uncompressed: 0:0:0:0:0:0:0:1). */
function canonicalName(name: string): string {
  const n = name.replace(/^\[|\]$/g, '').toLowerCase();
  return isIP(n) === 6 ? new URL(`http://[${n}]`).hostname.slice(1, -1) : n;
}

function sanList(cert: X509Certificate): string[] {
  return (cert.subjectAltName ?? '')
    .split(', ')
    .filter(Boolean)
    .map((s) => canonicalName(s.replace(/^(DNS|IP Address):/, '')))
    .sort();
}

function identityOf(key: string, cert: string, source: TlsIdentity['source'], files: { certFile: string; keyFile: string }, nextKey?: string): TlsIdentity {
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(cert);
  } catch (err) {
    throw new TlsError(`${files.certFile} is not a PEM certificate: ${(err as Error).message}`);
  }
  try {
    createSecureContext({ key, cert });
  } catch (err) {
    throw new TlsError(`${files.keyFile} and ${files.certFile} do not belong together: ${(err as Error).message}`);
  }
  const spki = [spkiSha256(key)];
  if (!leaf.publicKey.equals(createPublicKey(key))) throw new TlsError(`${files.keyFile} is not the key of ${files.certFile}`);
  if (nextKey) spki.push(spkiSha256(nextKey));
  return {
    key,
    cert,
    source,
    fingerprintSha256: fingerprintOf(leaf),
    spkiSha256: spki,
    pin: spki.map((s) => `sha256//${s}`).join(';'),
    subjectAltNames: sanList(leaf),
    notAfter: new Date(leaf.validTo).toISOString(),
    ...files,
  };
}

/** The admin's certificate and key (PLACARD_TLS_CERT, PLACARD_TLS_KEY). */
export function providedIdentity(certFile: string, keyFile: string): TlsIdentity {
  const read = (f: string) => {
    try {
      return readFileSync(f, 'utf8');
    } catch (err) {
      throw new TlsError(`cannot read ${f}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  };
  const key = read(keyFile);
  try {
    createPrivateKey(key);
  } catch (err) {
    throw new TlsError(`${keyFile} is not a PEM private key: ${(err as Error).message}`);
  }
  return identityOf(key, read(certFile), 'provided', { certFile, keyFile });
}

export const TLS_DIR = 'tls';

/**
 * The generated identity in `<dataDir>/tls/`, made on first use: keys are kept for good; the
 * certificate is (re-)issued when missing, not of this key, missing a name or near its end.
 */
export async function generatedIdentity(dataDir: string, names: string[]): Promise<TlsIdentity & { issued: boolean }> {
  const dir = path.join(dataDir, TLS_DIR);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const keyFile = path.join(dir, 'server.key');
  const nextFile = path.join(dir, 'next.key');
  const certFile = path.join(dir, 'server.crt');
  if (!existsSync(keyFile)) writePrivate(keyFile, await newKeyPem());
  if (!existsSync(nextFile)) writePrivate(nextFile, await newKeyPem());
  const key = readFileSync(keyFile, 'utf8');
  const nextKey = readFileSync(nextFile, 'utf8');
  if (spkiSha256(key) === spkiSha256(nextKey)) throw new TlsError(`${nextFile} is the same key as ${keyFile}: delete ${nextFile} (a new one is made)`);
  const wanted = [...new Set(names.map(canonicalName))].sort();
  let cert = existsSync(certFile) ? readFileSync(certFile, 'utf8') : null;
  let issued = false;
  const stale = (pem: string) => {
    try {
      const c = new X509Certificate(pem);
      const has = new Set(sanList(c));
      return (
        !c.publicKey.equals(createPublicKey(key)) ||
        wanted.some((n) => !has.has(n)) ||
        new Date(c.validTo).getTime() - Date.now() < RENEW_BEFORE_DAYS * 24 * 3_600_000
      );
    } catch {
      return true;
    }
  };
  if (!cert || stale(cert)) {
    cert = await issue(key, wanted);
    const tmp = `${certFile}.${process.pid}.tmp`;
    writeFileSync(tmp, cert, { mode: 0o644 });
    renameSync(tmp, certFile);
    issued = true;
  }
  return { ...identityOf(key, cert, 'generated', { certFile, keyFile }, nextKey), issued };
}

/** The generated identity as it is on disk (nothing made or re-issued), or null before the first start. */
export function storedIdentity(dataDir: string): TlsIdentity | null {
  const dir = path.join(dataDir, TLS_DIR);
  const [keyFile, nextFile, certFile] = ['server.key', 'next.key', 'server.crt'].map((f) => path.join(dir, f)) as [string, string, string];
  if (![keyFile, nextFile, certFile].every((f) => existsSync(f))) return null;
  return identityOf(readFileSync(keyFile, 'utf8'), readFileSync(certFile, 'utf8'), 'generated', { certFile, keyFile }, readFileSync(nextFile, 'utf8'));
}

/**
 * Rotation (`placard tls-rotate`): the next key becomes the server's key, a new next key is
 * made, the certificate is re-issued at the next start. Screens pinned to (old, next) keep
 * working; they learn the new next key when their installer runs again.
 */
export async function rotateGeneratedKey(dataDir: string): Promise<{ previous: string; current: string; next: string }> {
  const dir = path.join(dataDir, TLS_DIR);
  const keyFile = path.join(dir, 'server.key');
  const nextFile = path.join(dir, 'next.key');
  if (!existsSync(keyFile) || !existsSync(nextFile)) throw new TlsError(`no generated key in ${dir} yet: start the server once`);
  const previous = spkiSha256(readFileSync(keyFile, 'utf8'));
  const next = readFileSync(nextFile, 'utf8');
  writePrivate(path.join(dir, 'previous.key'), readFileSync(keyFile, 'utf8'));
  writePrivate(keyFile, next);
  writePrivate(nextFile, await newKeyPem());
  const certFile = path.join(dir, 'server.crt');
  if (existsSync(certFile)) renameSync(certFile, path.join(dir, 'previous.crt'));
  return { previous, current: spkiSha256(next), next: spkiSha256(readFileSync(nextFile, 'utf8')) };
}
