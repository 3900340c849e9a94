import { ApiError } from '../http/errors.js';
import type { Db } from '../db/database.js';

export interface ThrottlePolicy {
  /** Failures allowed within `windowMs` before the key is locked. */
  maxFailures: number;
  windowMs: number;
  /** First lock length; each further lock doubles it, up to `maxLockMs`. */
  lockMs: number;
  maxLockMs: number;
}

/**
 * Failure throttling persisted in SQLite (a restart does not reset it), keyed by what is
 * being guessed at: `login:acct:<email>`, `login:ip:<address>`, `pairing:ip:<address>`...
 * Every sign-in path calls `assertAllowed` first, `fail` on a miss, `succeed` on a hit.
 */
export class Throttle {
  constructor(private readonly db: Db) {}

  async assertAllowed(keys: readonly string[], now = Date.now()): Promise<void> {
    if (keys.length === 0) return;
    const rows = await this.db.selectFrom('auth_throttle').select(['key', 'locked_until']).where('key', 'in', keys).execute();
    let until = 0;
    for (const r of rows) if (r.locked_until) until = Math.max(until, Date.parse(r.locked_until));
    if (until > now) {
      const retryAfter = Math.max(1, Math.ceil((until - now) / 1000));
      throw new ApiError('rate_limited', `Too many failed attempts; try again in ${retryAfter} s`, {
        headers: { 'Retry-After': String(retryAfter) },
        details: { retryAfterSec: retryAfter },
      });
    }
  }

  async fail(entries: readonly (readonly [key: string, policy: ThrottlePolicy])[], now = Date.now()): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      for (const [key, policy] of entries) {
        const row = await trx.selectFrom('auth_throttle').selectAll().where('key', '=', key).executeTakeFirst();
        const windowOpen = row && now - Date.parse(row.window_started_at) < policy.windowMs;
        const failures = windowOpen ? row.failures + 1 : 1;
        const windowStart = windowOpen ? row.window_started_at : new Date(now).toISOString();
        let locks = row?.locks ?? 0;
        let lockedUntil: string | null = row?.locked_until ?? null;
        if (failures >= policy.maxFailures) {
          const ms = Math.min(policy.maxLockMs, policy.lockMs * 2 ** locks);
          locks += 1;
          lockedUntil = new Date(now + ms).toISOString();
        }
        await trx
          .insertInto('auth_throttle')
          .values({ key, failures: failures >= policy.maxFailures ? 0 : failures, window_started_at: windowStart, locks, locked_until: lockedUntil })
          .onConflict((oc) =>
            oc
              .column('key')
              .doUpdateSet({ failures: failures >= policy.maxFailures ? 0 : failures, window_started_at: windowStart, locks, locked_until: lockedUntil }),
          )
          .execute();
      }
    });
  }

  async succeed(keys: readonly string[]): Promise<void> {
    if (keys.length) await this.db.deleteFrom('auth_throttle').where('key', 'in', keys).execute();
  }

  /** Forgets windows and locks older than a day (periodic). */
  async prune(now = Date.now()): Promise<void> {
    const cutoff = new Date(now - 24 * 3600_000).toISOString();
    await this.db
      .deleteFrom('auth_throttle')
      .where('window_started_at', '<', cutoff)
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', new Date(now).toISOString())]))
      .execute();
  }
}

/** Sign-in guessing: per account, and per client address (many accounts from one place). */
export const ACCOUNT_POLICY: ThrottlePolicy = { maxFailures: 5, windowMs: 15 * 60_000, lockMs: 60_000, maxLockMs: 60 * 60_000 };
export const ADDRESS_POLICY: ThrottlePolicy = { maxFailures: 20, windowMs: 15 * 60_000, lockMs: 5 * 60_000, maxLockMs: 60 * 60_000 };
