import { z } from 'zod';

/** Every remote command the API queues (DESIGN.md section 6.5). */
export const COMMAND_TYPES = [
  'reload',
  'reboot',
  'restart_player',
  'screenshot',
  'display_on',
  'display_off',
  'clear_cache',
  'update_config',
  'identify',
  'sync_now',
] as const;
export type CommandType = (typeof COMMAND_TYPES)[number];

export interface CommandSupport {
  supported: boolean;
  /** Why not, in plain words (null when supported). */
  reason: string | null;
}

const PAGE_CANNOT: Partial<Record<CommandType, string>> = {
  reboot: 'cannot restart the machine it runs on',
  display_on: 'cannot switch the display’s power',
  display_off: 'cannot switch the display’s power',
};

/**
 * What each player family can run, when the player does not say itself. The browser player
 * (`/play`, family absent) and the Linux kiosk (`desktop-linux`: Chromium on the same page)
 * are web pages: no reboot, no display power. Native players (`android`, `edge`) run every
 * command of the protocol. A player that reports `supportedCommands` (a list of command
 * types) in its heartbeat status document is taken at its word instead.
 */
const FAMILY_TABLE: Record<string, { label: string; cannot: Partial<Record<CommandType, string>> }> = {
  web: { label: 'A web browser player', cannot: PAGE_CANNOT },
  'desktop-linux': { label: 'The Linux kiosk player (a browser page)', cannot: PAGE_CANNOT },
  android: { label: 'The Android player', cannot: {} },
  edge: { label: 'The edge player', cannot: {} },
};

export const CommandSupportDto = z
  .record(z.enum(COMMAND_TYPES), z.object({ supported: z.boolean(), reason: z.string().nullable() }))
  .meta({ id: 'CommandSupport', description: 'Per command type: whether this screen’s player can run it, and why not' });

export function commandSupport(playerFamily: string | null, lastStatus: Record<string, unknown> | null): Record<CommandType, CommandSupport> {
  const reported = Array.isArray(lastStatus?.supportedCommands)
    ? (lastStatus!.supportedCommands as unknown[]).filter((x): x is string => typeof x === 'string')
    : null;
  const family = FAMILY_TABLE[playerFamily ?? 'web'] ?? FAMILY_TABLE.web!;
  const out = {} as Record<CommandType, CommandSupport>;
  for (const type of COMMAND_TYPES) {
    if (reported) {
      const ok = reported.includes(type);
      out[type] = { supported: ok, reason: ok ? null : 'This screen’s player reports that it cannot run this command' };
    } else {
      const why = family.cannot[type];
      out[type] = { supported: !why, reason: why ? `${family.label} ${why}` : null };
    }
  }
  return out;
}
