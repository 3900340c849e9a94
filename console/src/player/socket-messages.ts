/**
 * The player socket's messages (DESIGN.md section 11) and how the browser connects:
 * `wss?://host/api/v1/player/socket` with the subprotocols `placard.v1` and
 * `bearer.<credential>` (a browser cannot set an Authorization header on a WebSocket).
 */
export type SocketMessage =
  | { type: 'manifest.changed'; revision: string | null }
  | { type: 'command.pending'; commandId: string | null }
  | { type: 'takeover.started' | 'takeover.ended' }
  | { type: 'ping' }
  | { type: 'hello'; manifestRevision: string | null }
  | { type: 'other'; name: string };

export function parseSocketMessage(data: unknown): SocketMessage | null {
  if (typeof data !== 'string') return null;
  let v: any;
  try {
    v = JSON.parse(data);
  } catch {
    return null;
  }
  if (!v || typeof v.type !== 'string') return null;
  switch (v.type) {
    case 'manifest.changed':
      return { type: 'manifest.changed', revision: v.revision === undefined || v.revision === null ? null : String(v.revision) };
    case 'command.pending':
      return { type: 'command.pending', commandId: typeof v.commandId === 'string' ? v.commandId : null };
    case 'takeover.started':
    case 'takeover.ended':
      return { type: v.type };
    case 'ping':
      return { type: 'ping' };
    case 'hello':
      return { type: 'hello', manifestRevision: v.manifestRevision === undefined || v.manifestRevision === null ? null : String(v.manifestRevision) };
    default:
      return { type: 'other', name: v.type };
  }
}

export function socketUrl(pageUrl: string): string {
  const u = new URL('/api/v1/player/socket', pageUrl);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  return u.toString();
}

export function socketProtocols(credential: string): string[] {
  return ['placard.v1', `bearer.${credential}`];
}

/** While the socket is down the player polls the manifest and commands this often. */
export const POLL_WHILE_DISCONNECTED_MS = 15_000;
/** With a live socket, a slow safety poll still runs (a missed push is never fatal). */
export const POLL_WHILE_CONNECTED_MS = 5 * 60_000;

/** Close codes the server uses (platform/realtime/hub.ts) and what the player does. */
export type CloseAction = 'credential-lost' | 'disabled' | 'replaced' | 'reconnect';

export function closeAction(code: number): CloseAction {
  if (code === 4001) return 'credential-lost';
  if (code === 4003) return 'disabled';
  if (code === 4009) return 'replaced';
  return 'reconnect';
}
