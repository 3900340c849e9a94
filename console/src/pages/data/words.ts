import { displayLocale } from '../../locale';
import type { DataSource, Diagnostics, FetchAttempt } from './model';

/** Plain words for the Data pages: what a fetch did, how fresh the data is (docs/console.md, "Data"). */

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  408: 'Request Timeout',
  410: 'Gone',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/** What a status means to someone fixing the source, when it says more than its name. */
const HINTS: Record<number, string> = {
  401: 'it wants credentials (Sign-in or a header below)',
  403: 'it refuses Placard: check the key or credentials',
  404: 'check the address',
  410: 'the document is gone: check the address',
  429: 'it asks Placard to fetch less often',
};

/** "10:02" today, else "26 Nov 2025, 10:02" (the console's locale). */
export function when(iso: string | null | undefined, now = new Date()): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const sameDay = d.toDateString() === now.toDateString();
  return sameDay
    ? d.toLocaleTimeString(displayLocale(), { hour: '2-digit', minute: '2-digit' })
    : d.toLocaleString(displayLocale(), { dateStyle: 'medium', timeStyle: 'short' });
}

/** "3 minutes", "2 hours", "5 days": how long ago, roughly. */
export function age(sec: number): string {
  const part = (n: number, w: string) => `${n} ${w}${n === 1 ? '' : 's'}`;
  if (sec < 90) return part(Math.max(0, Math.round(sec)), 'second');
  if (sec < 90 * 60) return part(Math.round(sec / 60), 'minute');
  if (sec < 36 * 3600) return part(Math.round(sec / 3600), 'hour');
  return part(Math.round(sec / 86400), 'day');
}

/** An interval in words: "every 15 minutes", "every hour", "every day". */
export function every(sec: number | null): string {
  if (!sec) return 'never (kept in Placard)';
  if (sec % 86400 === 0) return sec === 86400 ? 'every day' : `every ${sec / 86400} days`;
  if (sec % 3600 === 0) return sec === 3600 ? 'every hour' : `every ${sec / 3600} hours`;
  if (sec % 60 === 0) return sec === 60 ? 'every minute' : `every ${sec / 60} minutes`;
  return `every ${sec} seconds`;
}

const NOUN: Record<string, string> = {
  rss: 'The feed',
  ical: 'The calendar',
  csv: 'The CSV address',
  json: 'The JSON address',
};

/** What went wrong with one failed attempt, in a sentence (without the time). */
export function failureWords(provider: string, a: Pick<FetchAttempt, 'status' | 'errorCode' | 'error'>): string {
  const noun = NOUN[provider] ?? 'The address';
  switch (a.errorCode) {
    case 'http_status': {
      const status = a.status ?? 0;
      const hint = HINTS[status];
      return `${noun} answered ${status}${REASONS[status] ? ` ${REASONS[status]}` : ''}${hint ? ` (${hint})` : ''}`;
    }
    case 'timeout':
      return `${noun} did not answer in time`;
    case 'dns_failed':
      return `${noun}’s server name could not be found (check the address)`;
    case 'connection_failed':
      return `${noun}’s server could not be reached`;
    case 'tls_error':
      return `The secure connection to ${noun.charAt(0).toLowerCase()}${noun.slice(1)} failed (its certificate)`;
    case 'address_not_allowed':
      return `Placard does not fetch this address: ${a.error ?? 'not allowed'}`;
    case 'too_many_redirects':
      return `${noun} sent Placard from address to address too many times`;
    case 'too_large':
      return `${noun} answered a document too large to use`;
    case 'parse_failed':
      return `${noun} answered, but ${a.error?.replace(/^The document could not be read: /, 'its document could not be read: ') ?? 'its document could not be read'}`;
    default:
      return a.error ?? `${noun} could not be fetched`;
  }
}

/**
 * The problem of a stale or failing source in one or two sentences, e.g. "The feed answered
 * 404 Not Found (check the address) at 10:02; showing the data from 09:30."
 */
export function problemWords(d: Diagnostics): string | null {
  if (!d.stale) return null;
  const failed = d.attempts.find((a) => a.outcome === 'failed');
  const since = d.lastSuccessAt ? `showing the data from ${when(d.lastSuccessAt)}` : 'there is no data yet';
  if (d.consecutiveFailures > 0 && failed) {
    const times = d.consecutiveFailures > 1 ? ` It failed ${d.consecutiveFailures} times in a row.` : '';
    const next = d.nextRunAt ? ` Placard tries again at ${when(d.nextRunAt)}.` : '';
    return `${failureWords(d.provider, failed)} at ${when(failed.at)}; ${since}.${times}${next}`;
  }
  if (d.lastSuccessAt) return `No fetch worked since ${when(d.lastSuccessAt)} although it should have: the refresh may not be running.`;
  return d.staleReason;
}

export type Health = { label: string; tone: 'ok' | 'warn' | 'bad' | ''; title: string };

/** A source's state as a badge: up to date, failing, stale, waiting, kept here. */
export function healthOf(s: DataSource): Health {
  if (s.refreshIntervalSec === null) return { label: 'kept here', tone: 'ok', title: 'Its rows are kept in Placard' };
  if (s.state.error) return { label: s.snapshot ? 'stale' : 'failing', tone: 'bad', title: s.state.error };
  if (s.state.stale) return { label: 'stale', tone: 'warn', title: 'No fetch worked for a while' };
  if (!s.snapshot) return { label: 'waiting', tone: '', title: 'The first fetch has not happened yet' };
  return { label: 'up to date', tone: 'ok', title: `Last fetched ${when(s.state.lastSuccessAt)}` };
}
