import { readFileSync, readlinkSync } from 'node:fs';

/** Names that all mean UTC; stored as `UTC` so people read one name. */
const UTC_ALIASES = new Set([
  'UTC',
  'Etc/UTC',
  'Etc/UCT',
  'UCT',
  'Etc/Universal',
  'Universal',
  'Etc/Zulu',
  'Zulu',
  'GMT',
  'Etc/GMT',
  'Etc/GMT0',
  'Etc/GMT+0',
  'Etc/GMT-0',
  'GMT0',
  'GMT+0',
  'GMT-0',
  'Etc/Greenwich',
  'Greenwich',
]);

export function isIanaZone(name: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/.test(name)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

const canonical = (name: string) => (UTC_ALIASES.has(name) ? 'UTC' : name);

/** Where the box's zone can be read; replaceable in tests. */
export interface ZoneSources {
  env: NodeJS.ProcessEnv;
  /** The target of /etc/localtime (a link into .../zoneinfo/<Zone>), or null. */
  localtimeLink(): string | null;
  /** Debian's /etc/timezone, or null. */
  timezoneFile(): string | null;
  /** What the JavaScript runtime resolved (Intl). */
  intlZone(): string | undefined;
}

export const systemZoneSources: ZoneSources = {
  env: process.env,
  localtimeLink: () => {
    try {
      return readlinkSync('/etc/localtime');
    } catch {
      return null;
    }
  },
  timezoneFile: () => {
    try {
      return readFileSync('/etc/timezone', 'utf8');
    } catch {
      return null;
    }
  },
  intlZone: () => Intl.DateTimeFormat().resolvedOptions().timeZone,
};

/**
 * The time zone of the machine the server runs on, as an IANA name: `TZ` (a zone name,
 * or `:Zone`), then the zone /etc/localtime links to, then /etc/timezone, then what
 * Intl resolved; `UTC` when none of them names a zone. UTC aliases read as `UTC`.
 */
export function detectBoxTimeZone(sources: ZoneSources = systemZoneSources): { zone: string; from: string } {
  const tz = sources.env.TZ?.trim().replace(/^:/, '');
  if (tz && isIanaZone(tz)) return { zone: canonical(tz), from: 'TZ' };
  const link = sources.localtimeLink();
  const m = link ? /zoneinfo\/(.+)$/.exec(link) : null;
  if (m && isIanaZone(m[1]!)) return { zone: canonical(m[1]!), from: '/etc/localtime' };
  const file = sources.timezoneFile()?.trim();
  if (file && isIanaZone(file)) return { zone: canonical(file), from: '/etc/timezone' };
  const intl = sources.intlZone();
  if (intl && isIanaZone(intl)) return { zone: canonical(intl), from: 'Intl' };
  return { zone: 'UTC', from: 'fallback' };
}

let detected: string | null = null;
/** The box's zone, detected once per process. */
export function boxTimeZone(): string {
  detected ??= detectBoxTimeZone().zone;
  return detected;
}
