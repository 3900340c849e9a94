/** `placard wait-ready`: polls the local server's /readyz (the service's ExecStartPost). */

/** Readiness checks that `wait-ready` tolerates failing (the server works, short of space). */
const LOW_DISK_ONLY = new Set(['diskSpace']);

/** The names of the failing checks in a /readyz 503 body (none when it is not one). */
function failingChecks(body: string): string[] {
  try {
    const checks = (JSON.parse(body) as { error?: { details?: { checks?: Record<string, { ok?: boolean }> } } }).error?.details?.checks ?? {};
    return Object.entries(checks)
      .filter(([, c]) => c?.ok === false)
      .map(([name]) => name);
  } catch {
    return [];
  }
}

/**
 * Asks `${base}/readyz` every half second for `seconds`: ready (with the message when only
 * the disk space check fails: low disk space alone does not keep the service from starting,
 * refusing to run frees nothing and screens need the server all the more; /readyz keeps
 * saying it), or not, with the last answer.
 */
export async function waitUntilReady(base: string, seconds: number): Promise<{ ready: true; lowDisk: string | null } | { ready: false; last: string }> {
  const until = Date.now() + seconds * 1000;
  let last = '';
  while (Date.now() < until) {
    try {
      const res = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(5_000) });
      if (res.status === 200) return { ready: true, lowDisk: null };
      const text = await res.text();
      const failing = failingChecks(text);
      if (res.status === 503 && failing.length > 0 && failing.every((c) => LOW_DISK_ONLY.has(c))) {
        return { ready: true, lowDisk: String(JSON.parse(text).error.message) };
      }
      last = `${res.status} ${text.slice(0, 300)}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  return { ready: false, last };
}
