/** Encrypted backups: age (scrypt passphrase) in a worker thread, and the server's configured passphrase. */
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { PassThrough, Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Worker } from 'node:worker_threads';
import { BackupError, MIN_PASSPHRASE_LENGTH } from './backup-format.js';

const AGE_MAGIC = 'age-encryption.org/v1\n';

/** Is `file` an age-encrypted file (by its first bytes)? */
export function isEncryptedFile(file: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return false;
  }
  try {
    const buf = Buffer.alloc(AGE_MAGIC.length);
    return readSync(fd, buf, 0, buf.length, 0) === buf.length && buf.toString('latin1') === AGE_MAGIC;
  } finally {
    closeSync(fd);
  }
}

/** A passphrase someone gave: long enough, one line. */
export function checkPassphrase(passphrase: string): string {
  if (passphrase.length < MIN_PASSPHRASE_LENGTH) throw new BackupError(`the passphrase must be at least ${MIN_PASSPHRASE_LENGTH} characters`);
  if (passphrase.length > 1024 || /[\r\n\0]/.test(passphrase)) throw new BackupError('the passphrase must be one line of at most 1024 characters');
  return passphrase;
}

/**
 * The server's backup passphrase: the first line of PLACARD_BACKUP_PASSPHRASE_FILE (kept
 * outside the data directory, so never inside a backup), or null when none is configured.
 */
export function configuredPassphrase(file: string | null | undefined): string | null {
  if (!file) return null;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new BackupError(
      `cannot read the backup passphrase file ${file} (PLACARD_BACKUP_PASSPHRASE_FILE): ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      'failed',
    );
  }
  const line = text.split(/\r?\n/)[0] ?? '';
  try {
    return checkPassphrase(line);
  } catch (err) {
    throw new BackupError(`the backup passphrase file ${file}: ${(err as Error).message}`, 'failed');
  }
}

/**
 * age (typage, by the age author) encrypts and decrypts in a worker thread: its scrypt and
 * ChaCha20-Poly1305 are JavaScript, and scrypt alone holds a CPU for seconds, which the
 * server's event loop must not. The plain tar crosses as a transferred web stream.
 */
const AGE_WORKER = `
  const { parentPort, workerData } = require('node:worker_threads');
  const { createReadStream, createWriteStream, fsyncSync, openSync, closeSync } = require('node:fs');
  const { Readable } = require('node:stream');
  const { pipeline } = require('node:stream/promises');
  parentPort.once('message', async (msg) => {
    try {
      const age = await import(workerData.age);
      if (workerData.mode === 'encrypt') {
        const e = new age.Encrypter();
        e.setPassphrase(workerData.passphrase);
        const out = await e.encrypt(msg.stream);
        await pipeline(Readable.fromWeb(out), createWriteStream(workerData.file, { flags: 'a', mode: 0o600 }));
        const fd = openSync(workerData.file, 'r+'); fsyncSync(fd); closeSync(fd);
        parentPort.postMessage({ ok: true });
      } else {
        const d = new age.Decrypter();
        d.addPassphrase(workerData.passphrase);
        let plain;
        try {
          plain = await d.decrypt(Readable.toWeb(createReadStream(workerData.file)));
        } catch (err) {
          parentPort.postMessage({ ok: false, message: String(err && err.message || err) });
          return;
        }
        parentPort.postMessage({ ok: true, stream: plain }, [plain]);
        // Stay alive (a listening port) while the main thread reads: it terminates this worker.
        parentPort.once('message', () => {});
      }
    } catch (err) {
      parentPort.postMessage({ ok: false, message: String(err && err.message || err) });
    }
  });
`;

function ageWorker(mode: 'encrypt' | 'decrypt', file: string, passphrase: string): Worker {
  return new Worker(AGE_WORKER, { eval: true, workerData: { mode, file, passphrase, age: import.meta.resolve('age-encryption') } });
}

/** Encrypts the plain stream `source` into `file` (appended; fsynced). */
export async function encryptTo(source: NodeJS.ReadableStream, file: string, passphrase: string): Promise<void> {
  const worker = ageWorker('encrypt', file, passphrase);
  // tar-stream's pack is a streamx stream: a Node stream in between for toWeb.
  const plain = new PassThrough();
  const feeding = pipeline(source, plain).catch((err: Error) => plain.destroy(err));
  try {
    const web = Readable.toWeb(plain);
    const answer = new Promise<{ ok: boolean; message?: string }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`the encryption worker exited with ${code}`)));
    });
    worker.postMessage({ stream: web }, [web as unknown as import('node:worker_threads').TransferListItem]);
    const msg = await answer;
    await feeding;
    if (!msg.ok) throw new BackupError(`encryption failed: ${msg.message}`, 'failed');
  } finally {
    await worker.terminate();
  }
}

/** The plain tar of an encrypted backup, as a stream; a wrong passphrase is a BackupError. */
export async function decryptedStream(file: string, passphrase: string): Promise<{ stream: Readable; worker: Worker }> {
  const worker = ageWorker('decrypt', file, passphrase);
  worker.postMessage({});
  const msg = await new Promise<{ ok: boolean; message?: string; stream?: ReadableStream }>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the decryption worker exited with ${code}`)));
  }).catch(async (err: Error) => {
    await worker.terminate();
    throw new BackupError(`the encrypted backup cannot be read: ${err.message}`);
  });
  if (!msg.ok || !msg.stream) {
    await worker.terminate();
    const wrong = /no identity matched|incorrect|passphrase/i.test(msg.message ?? '');
    throw new BackupError(wrong ? 'the passphrase does not open this encrypted backup' : `the encrypted backup cannot be read: ${msg.message}`);
  }
  // Buffers for tar-stream (the web stream yields Uint8Arrays). A failure of the decryption
  // (a tampered or cut chunk) reaches whoever reads `buffers`: pipeline destroys it with the error.
  const web = Readable.fromWeb(msg.stream as import('node:stream/web').ReadableStream);
  const buffers = new Transform({ transform: (chunk: Uint8Array, _enc, done) => done(null, Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)) });
  pipeline(web, buffers).catch(() => {});
  return { stream: buffers, worker };
}
