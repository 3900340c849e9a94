import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import type { Db } from '../db/database.js';
import type { Principal } from './auth.js';
import { ApiError } from './errors.js';
import type { Reply } from './route.js';

/**
 * Idempotency-Key (draft-ietf-httpapi-idempotency-key-header; docs/api-conventions.md,
 * "Idempotency-Key") for the routes marked `idempotent: true`. The first request with a key
 * claims it (a row with no status yet) and runs; its 2xx reply (status, data, the headers
 * the handler gave) is kept, and a retry with the same key and the same request (method,
 * path, SHA-256 of the body as sent) gets that reply again, marked `Idempotency-Replayed:
 * true`, without the handler running. Keys belong to the caller (a user, a token, a screen):
 * two callers' keys never meet. Kept 24 hours.
 */

/** The request header, and the header a replayed answer carries. */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const IDEMPOTENCY_REPLAYED_HEADER = 'Idempotency-Replayed';

/** How long a key and its reply are kept (the draft leaves it to the server; 24 hours is common). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60_000;
/**
 * A claim whose request never finished (the server stopped mid-request) is taken over after
 * this long, so a crash does not lock the key for a day; no handler runs this long.
 */
export const IDEMPOTENCY_ABANDONED_MS = 10 * 60_000;

const KEY_SHAPE = /^[\x21-\x7e]{1,255}$/;

function badKey(message: string): ApiError {
  return new ApiError('validation_failed', message, {
    details: { issues: [{ location: 'header', path: [IDEMPOTENCY_KEY_HEADER], message, code: 'invalid' }] },
  });
}

/**
 * The key of a request: null without the header. The draft sends it as a Structured Field
 * string (`"8e03978e-..."`); a bare token is taken as well. 1-255 visible ASCII characters
 * (no spaces), else 400 `validation_failed`.
 */
export function idempotencyKeyOf(ctx: Pick<Context, 'get'>): string | null {
  const raw = ctx.get(IDEMPOTENCY_KEY_HEADER);
  if (raw === '') return null;
  let key = raw.trim();
  if (key.startsWith('"')) {
    const m = /^"((?:[^"\\]|\\["\\])*)"$/.exec(key);
    if (!m) throw badKey('Idempotency-Key is not a well-formed quoted string');
    key = m[1]!.replace(/\\(["\\])/g, '$1');
  }
  if (!KEY_SHAPE.test(key)) throw badKey('Idempotency-Key must be 1 to 255 visible ASCII characters (no spaces)');
  return key;
}

/** Whose key it is: keys of different callers are independent. */
export function principalKeyOf(auth: Principal): string | null {
  switch (auth.kind) {
    case 'session':
      return `user:${auth.userId}`;
    case 'integration':
      return `token:${auth.tokenId}`;
    case 'device':
      return `screen:${auth.screenId}`;
    default:
      return null;
  }
}

interface Stored {
  kind: Reply['kind'];
  data?: unknown;
  headers?: Record<string, string>;
}

export type Claim =
  /** The request may run; `finish` keeps its reply (2xx only), `release` frees the key. */
  | { kind: 'run'; finish(reply: Reply): Promise<void>; release(): Promise<void> }
  /** The stored reply of the first request, to answer again. */
  | { kind: 'replay'; reply: Reply };

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/**
 * Claims `key` for this request, or answers what the first request with it got. Throws 409
 * `conflict` while the first request still runs and 422 `idempotency_key_reused` when the
 * key was used for a different request.
 */
export async function claimIdempotencyKey(
  db: Db,
  input: { principal: string; key: string; method: string; path: string; body: string },
  now = Date.now(),
): Promise<Claim> {
  const { principal, key, method, path } = input;
  const requestSha256 = sha256(input.body);
  const expired = new Date(now - IDEMPOTENCY_TTL_MS).toISOString();
  const abandoned = new Date(now - IDEMPOTENCY_ABANDONED_MS).toISOString();
  // One statement each: SQLite runs them one at a time, so of two racing requests exactly one inserts.
  await db
    .deleteFrom('idempotency_keys')
    .where('principal', '=', principal)
    .where('key', '=', key)
    .where((eb) => eb.or([eb('created_at', '<', expired), eb.and([eb('status', 'is', null), eb('created_at', '<', abandoned)])]))
    .execute();
  const inserted = await db
    .insertInto('idempotency_keys')
    .values({ principal, key, method, path, request_sha256: requestSha256, status: null, body: null, created_at: new Date(now).toISOString() })
    .onConflict((oc) => oc.doNothing())
    .executeTakeFirst();
  const mine = db.deleteFrom('idempotency_keys').where('principal', '=', principal).where('key', '=', key).where('status', 'is', null);
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1) {
    return {
      kind: 'run',
      release: async () => void (await mine.execute()),
      finish: async (reply) => {
        if (reply.status < 200 || reply.status > 299) {
          await mine.execute();
          return;
        }
        const stored: Stored = {
          kind: reply.kind,
          ...(reply.kind === 'json' ? { data: reply.data } : {}),
          ...(reply.headers ? { headers: reply.headers } : {}),
        };
        await db
          .updateTable('idempotency_keys')
          .set({ status: reply.status, body: JSON.stringify(stored) })
          .where('principal', '=', principal)
          .where('key', '=', key)
          .execute();
      },
    };
  }
  const row = await db.selectFrom('idempotency_keys').selectAll().where('principal', '=', principal).where('key', '=', key).executeTakeFirst();
  if (!row) {
    // Released between our insert and this read (the first request failed): the client may retry.
    throw new ApiError('conflict', 'A request with this Idempotency-Key was being processed; retry it', { details: { idempotencyKey: 'in_progress' } });
  }
  if (row.method !== method || row.path !== path || row.request_sha256 !== requestSha256) {
    throw new ApiError(
      'idempotency_key_reused',
      'This Idempotency-Key was used for a different request (method, path or body); send the same request again, or use a new key for a new one',
    );
  }
  if (row.status === null || row.body === null) {
    throw new ApiError('conflict', 'A request with this Idempotency-Key is still being processed; retry it shortly', {
      details: { idempotencyKey: 'in_progress' },
    });
  }
  const stored = JSON.parse(row.body) as Stored;
  const headers = { ...stored.headers, [IDEMPOTENCY_REPLAYED_HEADER]: 'true' };
  return {
    kind: 'replay',
    reply: stored.kind === 'json' ? { kind: 'json', status: row.status, data: stored.data, headers } : { kind: 'empty', status: row.status, headers },
  };
}

/** Forgets keys older than IDEMPOTENCY_TTL_MS (a periodic task in app.ts); answers how many. */
export async function pruneIdempotencyKeys(db: Db, now = Date.now()): Promise<number> {
  const result = await db
    .deleteFrom('idempotency_keys')
    .where('created_at', '<', new Date(now - IDEMPOTENCY_TTL_MS).toISOString())
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
