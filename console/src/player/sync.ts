/**
 * Presentation networks in the browser player (docs/presentation-networks.md): screens of
 * one network show the same item at the same moment.
 *
 * - Clock: the server's clock is the reference. `ClockSync` keeps samples of
 *   (offset, round trip) from the heartbeat reply's `serverTime` and from socket
 *   `ping` -> `pong {serverTime}` exchanges, and follows the sample with the smallest round
 *   trip among the recent ones (NTP's rule: its offset error is at most half its round trip).
 * - Items: a network member's manifest carries the leader's timeline and the network's
 *   `epoch`; the item on screen is the one at ((serverNow - epoch) mod cycle) of the
 *   playlist's playable items, so every member agrees without talking to each other.
 *   Corrections land at item boundaries (each boundary is computed from the current
 *   estimate); an item is replaced mid-way only when the wrong one is on.
 * - `network.test`: an overlay with the screen's name, position, the network's name and a
 *   clock with milliseconds driven by the estimated server time, until `until`.
 */
import type { PlaylistItem } from './manifest.js';
import { itemDurationMs, itemPlayableAt } from './schedule.js';

export interface NetworkInfo {
  id: string;
  name: string;
  epoch: number;
  leaderScreenId: string | null;
  position: number;
  memberCount: number;
}

/** The manifest's `presentationNetwork`, or null when absent or malformed. */
export function readNetwork(raw: unknown): NetworkInfo | null {
  if (!raw || typeof raw !== 'object') return null;
  const o = raw as Record<string, unknown>;
  const epoch = typeof o.epoch === 'string' ? Date.parse(o.epoch) : Number.NaN;
  if (typeof o.id !== 'string' || !Number.isFinite(epoch)) return null;
  return {
    id: o.id,
    name: typeof o.name === 'string' ? o.name : '',
    epoch,
    leaderScreenId: typeof o.leaderScreenId === 'string' ? o.leaderScreenId : null,
    position: typeof o.position === 'number' ? o.position : 0,
    memberCount: typeof o.memberCount === 'number' ? o.memberCount : 1,
  };
}

interface Sample {
  offset: number;
  rtt: number;
  at: number;
}

/** How many recent samples the estimate chooses from, and for how long one counts. */
const KEEP = 12;
const MAX_AGE_MS = 10 * 60_000;

export class ClockSync {
  private samples: Sample[] = [];
  private best: Sample | null = null;

  /** The estimated server clock minus the local clock (ms). */
  get offsetMs(): number {
    return this.best?.offset ?? 0;
  }

  get roundTripMs(): number | null {
    return this.best?.rtt ?? null;
  }

  /** One exchange: sent at `sentAt`, the server said `serverTime`, answered at `receivedAt` (local ms). */
  add(sentAt: number, serverTime: number, receivedAt: number): void {
    if (!Number.isFinite(serverTime) || receivedAt < sentAt) return;
    const rtt = receivedAt - sentAt;
    this.samples.push({ offset: serverTime + rtt / 2 - receivedAt, rtt, at: receivedAt });
    this.samples = this.samples.filter((s) => receivedAt - s.at <= MAX_AGE_MS).slice(-KEEP);
    this.best = this.samples.reduce<Sample | null>((b, s) => (!b || s.rtt < b.rtt ? s : b), null);
  }
}

/** While the estimate is young, ping often; then every 15 s (the drift of a quartz clock is far below a ms in that time). */
export function pingDelayMs(samples: number): number {
  return samples < 8 ? 1_000 : 15_000;
}

/**
 * Pings the server over the socket for clock samples (`{"type":"ping"}` -> `{"type":"pong", serverTime}`).
 * Answers a handler for the socket's messages (true when it took the message) and a stop.
 */
export function socketClock(ws: WebSocket, sync: ClockSync, local: () => number = Date.now) {
  let sentAt: number | null = null;
  let count = 0;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const ping = () => {
    if (ws.readyState !== 1) return;
    sentAt = local();
    try {
      ws.send(JSON.stringify({ type: 'ping' }));
    } catch {
      return;
    }
    timer = setTimeout(ping, pingDelayMs(++count));
  };
  ping();
  return {
    onMessage(data: unknown): boolean {
      if (typeof data !== 'string' || !data.includes('"pong"')) return false;
      const received = local();
      try {
        const v = JSON.parse(data) as { type?: string; serverTime?: string };
        if (v.type !== 'pong') return false;
        if (sentAt !== null && typeof v.serverTime === 'string') sync.add(sentAt, Date.parse(v.serverTime), received);
      } catch {
        return false;
      }
      sentAt = null;
      return true;
    },
    stop() {
      if (timer) clearTimeout(timer);
    },
  };
}

/** Which item of a synced playlist is on at `now` (server clock), and when it ends; null when none can play. */
export function syncedItemAt(
  items: readonly PlaylistItem[],
  epoch: number,
  now: number,
  zone: string,
): { item: PlaylistItem; index: number; startsAt: number; endsAt: number } | null {
  const playable = items.filter((i) => itemPlayableAt(i, now, zone));
  const cycle = playable.reduce((sum, i) => sum + syncedDurationMs(i), 0);
  if (playable.length === 0 || cycle <= 0) return null;
  const cycleStart = now - ((((now - epoch) % cycle) + cycle) % cycle);
  let t = cycleStart;
  for (const [index, item] of playable.entries()) {
    const d = syncedDurationMs(item);
    if (now < t + d) return { item, index, startsAt: t, endsAt: t + d };
    t += d;
  }
  const last = playable.at(-1)!;
  return { item: last, index: playable.length - 1, startsAt: t - syncedDurationMs(last), endsAt: t };
}

/** A synced item's slot: its duration (videos too: all members cut at the same moment, not at `ended`). */
export function syncedDurationMs(item: PlaylistItem): number {
  if ((item.kind === 'video' || item.kind === 'audio') && item.durationMs !== null && item.durationMs > 0) return item.durationMs;
  return itemDurationMs(item);
}

/** How long before a boundary the next item is prepared (decoded, hidden), so it is shown on time. */
export const PREPARE_MS = 400;
/** Timers are capped: a re-check at least this often catches a clock correction mid-item. */
export const RECHECK_MS = 5_000;

/** The identification pattern of `network.test`. */
export interface NetworkTest {
  networkId: string;
  networkName: string;
  screenName: string;
  position: number;
  leader: boolean;
  memberCount: number;
  until: number;
}

export function readNetworkTest(data: unknown): NetworkTest | null {
  if (typeof data !== 'string' || !data.includes('network.test')) return null;
  try {
    const v = JSON.parse(data) as Record<string, unknown>;
    const until = typeof v.until === 'string' ? Date.parse(v.until) : Number.NaN;
    if (v.type !== 'network.test' || !Number.isFinite(until)) return null;
    return {
      networkId: String(v.networkId ?? ''),
      networkName: String(v.networkName ?? ''),
      screenName: String(v.screenName ?? ''),
      position: typeof v.position === 'number' ? v.position : 0,
      leader: v.leader === true,
      memberCount: typeof v.memberCount === 'number' ? v.memberCount : 0,
      until,
    };
  } catch {
    return null;
  }
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** `HH:MM:SS.mmm` UTC of a server-clock instant. */
export function clockText(ms: number): string {
  const d = new Date(ms);
  return `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}`;
}
