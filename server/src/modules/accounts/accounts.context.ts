import type { Context } from 'koa';
import type { ServerSecrets } from '../../platform/security/secrets.js';
import { ACCOUNT_POLICY, ADDRESS_POLICY, type Throttle, type ThrottlePolicy } from '../../platform/security/throttle.js';

declare module 'koa' {
  interface DefaultContext {
    /** Root secret of the installation (sealing, HMAC keys). */
    secrets: ServerSecrets;
    /** Failure throttling for every guessable credential. */
    throttle: Throttle;
  }
}

/** Throttle keys for one sign-in attempt: the account (when known) and the client address. */
export function signInKeys(ctx: Context, kind: string, account?: string) {
  const keys: [string, typeof ACCOUNT_POLICY][] = [[`${kind}:ip:${ctx.ip}`, ADDRESS_POLICY]];
  if (account) keys.push([`${kind}:acct:${account}`, ACCOUNT_POLICY]);
  return { keys: keys.map(([k]) => k), entries: keys };
}

/** Runs a guess under throttling: 429 while locked, a failure counted when `attempt` answers false. */
export async function throttled<T>(ctx: Context, kind: string, account: string | undefined, attempt: () => Promise<T | false>): Promise<T | false> {
  const { keys, entries } = signInKeys(ctx, kind, account);
  await ctx.throttle.assertAllowed(keys);
  let result: T | false;
  try {
    result = await attempt();
  } catch (err) {
    await ctx.throttle.fail(entries);
    throw err;
  }
  if (result === false) await ctx.throttle.fail(entries);
  else if (account) await ctx.throttle.succeed([`${kind}:acct:${account}`]);
  return result;
}

/**
 * Anonymous requests that store something (a passwordless passkey challenge makes a
 * session row): 60 per address in 15 minutes, then 5 minutes' pause (doubling, at most 15).
 */
export const ANONYMOUS_ISSUE_POLICY: ThrottlePolicy = { maxFailures: 60, windowMs: 15 * 60_000, lockMs: 5 * 60_000, maxLockMs: 15 * 60_000 };

/** Counts one anonymous issuance against the client address; 429 rate_limited while paused. */
export async function limitAnonymousIssuance(ctx: Context, kind: string): Promise<void> {
  const key = `${kind}:ip:${ctx.ip}`;
  await ctx.throttle.assertAllowed([key]);
  await ctx.throttle.fail([[key, ANONYMOUS_ISSUE_POLICY]]);
}
