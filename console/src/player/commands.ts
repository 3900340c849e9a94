/**
 * Remote commands the browser player understands (DESIGN.md section 6.5): each is
 * acknowledged when received, then answered with a result. What a page cannot do
 * (reboot the machine, switch the display's power) is answered `failed` with a reason,
 * never left hanging.
 */
import type { CommandResult, PlayerCommand } from './protocol.js';

export type CommandAction =
  | { kind: 'reload' }
  | { kind: 'clear-cache' }
  | { kind: 'screenshot' }
  | { kind: 'identify'; seconds: number }
  | { kind: 'sync' }
  | { kind: 'unsupported'; reason: string };

const ALIASES: Record<string, string> = {
  reload: 'reload',
  restart: 'reload',
  'restart-player': 'reload',
  restart_player: 'reload',
  refresh: 'reload',
  clear_cache: 'clear-cache',
  'clear-cache': 'clear-cache',
  clearcache: 'clear-cache',
  screenshot: 'screenshot',
  identify: 'identify',
  sync: 'sync',
  'sync-now': 'sync',
  sync_now: 'sync',
  refresh_manifest: 'sync',
  update_config: 'sync',
};

export function commandAction(command: PlayerCommand): CommandAction {
  const type = String(command.type ?? '').toLowerCase();
  switch (ALIASES[type]) {
    case 'reload':
      return { kind: 'reload' };
    case 'clear-cache':
      return { kind: 'clear-cache' };
    case 'screenshot':
      return { kind: 'screenshot' };
    case 'sync':
      return { kind: 'sync' };
    case 'identify': {
      const args = command.params ?? command.payload ?? {};
      const raw = typeof args.seconds === 'number' ? args.seconds : typeof args.durationSec === 'number' ? args.durationSec : 10;
      return { kind: 'identify', seconds: Math.min(120, Math.max(1, raw)) };
    }
    default:
      return {
        kind: 'unsupported',
        reason: `The browser player cannot run "${command.type}"${type === 'reboot' || type.startsWith('display') ? ' (it has no control over the machine or the display)' : ''}.`,
      };
  }
}

/** Commands past their expiry are answered as failed without running. */
export function commandExpired(command: PlayerCommand, now: number): boolean {
  if (!command.expiresAt) return false;
  const t = Date.parse(command.expiresAt);
  return Number.isFinite(t) && t <= now;
}

export function failed(message: string): CommandResult {
  return { status: 'failed', message };
}

export function succeeded(message?: string, output?: Record<string, unknown>): CommandResult {
  return { status: 'succeeded', ...(message ? { message } : {}), ...(output ? { output } : {}) };
}

/** Remembers handled command ids so a command seen by socket and by poll runs once. */
export class SeenCommands {
  private readonly ids: string[] = [];

  constructor(private readonly limit = 200) {}

  /** True the first time an id is offered. */
  first(id: string): boolean {
    if (this.ids.includes(id)) return false;
    this.ids.push(id);
    if (this.ids.length > this.limit) this.ids.shift();
    return true;
  }
}
