import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocket, WebSocketServer } from 'ws';
import type { Cluster } from '../cluster.js';
import { ApiError } from '../http/errors.js';
import { FetchLine, type FetchLineOptions } from './fetch-line.js';

/** The path players open the socket on (DESIGN.md section 6.4). */
export const PLAYER_SOCKET_PATH = '/api/v1/player/socket';
/** The subprotocol browsers name next to `bearer.<credential>`. */
export const PLAYER_SUBPROTOCOL = 'placard.v1';

/** A message the server pushes: JSON `{type, ...}` (DESIGN.md section 11). */
export type RealtimeMessage =
  | { type: 'manifest.changed'; revision: number }
  | { type: 'command.pending'; commandId: string }
  | { type: 'takeover.started'; [key: string]: unknown }
  | { type: 'takeover.ended'; [key: string]: unknown }
  | { type: 'ping'; serverTime: string }
  | { type: 'hello'; screenId: string; serverTime: string; manifestRevision: number }
  | { type: string; [key: string]: unknown };

/** Who is on the other end of an accepted socket. */
export interface SocketIdentity {
  screenId: string;
  credentialId: string;
  manifestRevision: number;
}

/** Resolves a device credential (throws ApiError on an unknown, revoked or disabled one). */
export type SocketAuthenticator = (token: string) => Promise<SocketIdentity>;

export interface RealtimeOptions {
  /** How often the server pings every socket; a socket that missed the last pong is closed. */
  pingIntervalMs?: number;
  /** The line of screens told `manifest.changed` (fetch-line.ts): its window's bounds and how long a told screen keeps its place. */
  manifestLine?: FetchLineOptions;
}

/** What a hub relays to the other instances' hubs: a manifest push, a message, a close. */
type Relayed = ['m', string, number] | ['s', string, RealtimeMessage] | ['c', string, number, string, string | null];

/** A relay message's size at most (PostgreSQL's NOTIFY takes under 8000 bytes with the envelope). */
const RELAY_BATCH_BYTES = 7_000;

/** Close codes players can act on. */
export const CLOSE_CODES = {
  revoked: 4001,
  disabled: 4003,
  replaced: 4009,
  shutdown: 1001,
} as const;

interface Client {
  ws: WebSocket;
  identity: SocketIdentity;
  alive: boolean;
  /** False until the credential is checked again after the handshake; pushes wait in `held`. */
  ready: boolean;
  held: string[];
}

/** The close code for a credential refused after the handshake. */
function closeCodeOf(err: unknown): number {
  if (err instanceof ApiError && err.code === 'screen_disabled') return CLOSE_CODES.disabled;
  if (err instanceof ApiError && (err.code === 'credential_revoked' || err.code === 'invalid_credential')) return CLOSE_CODES.revoked;
  return 1011; // internal error
}

/**
 * The WebSocket hub: one channel per screen (a screen may hold several sockets, e.g. a
 * player and a preview). It is attached to the HTTP server at listen time and answers
 * upgrades on the player socket path only, after checking the device credential; any
 * other request for an upgrade is refused before the handshake.
 */
export class RealtimeHub {
  private readonly wss = new WebSocketServer({
    noServer: true,
    maxPayload: 64 * 1024,
    handleProtocols: (protocols) => (protocols.has(PLAYER_SUBPROTOCOL) ? PLAYER_SUBPROTOCOL : false),
  });
  private readonly channels = new Map<string, Set<Client>>();
  private authenticator: SocketAuthenticator | null = null;
  private pingTimer: NodeJS.Timeout | null = null;
  private readonly pingIntervalMs: number;
  private readonly line: FetchLine;

  constructor(
    private readonly logger: Logger,
    options: RealtimeOptions = {},
  ) {
    this.pingIntervalMs = options.pingIntervalMs ?? 25_000;
    this.line = new FetchLine((screenId, revision) => this.sendHere(screenId, { type: 'manifest.changed', revision }) > 0, options.manifestLine);
  }

  /**
   * Several instances share the database (platform/cluster.ts): a player's socket may be
   * open on any of them. What this hub is asked to push or close is also relayed to the
   * others (batched: one message per few hundred screens), which do the same to the sockets
   * they hold; counts answered here are this instance's sockets.
   */
  attachCluster(cluster: Cluster): void {
    if (!cluster.shared) return;
    this.cluster = cluster;
    cluster.on('realtime', (entries: Relayed[]) => {
      if (!Array.isArray(entries)) return;
      for (const e of entries) {
        if (e[0] === 'm') this.pushHere(e[1], e[2]);
        else if (e[0] === 's') this.sendHere(e[1], e[2]);
        else if (e[0] === 'c') this.closeHere(e[1], e[2], e[3], e[4] === null ? {} : { exceptCredentialId: e[4] });
      }
    });
  }

  private cluster: Cluster | null = null;
  private outbox: Relayed[] = [];

  private relay(entry: Relayed): void {
    if (!this.cluster) return;
    if (this.outbox.length === 0) setImmediate(() => this.flush());
    this.outbox.push(entry);
  }

  private flush(): void {
    const entries = this.outbox;
    this.outbox = [];
    let batch: Relayed[] = [];
    let bytes = 0;
    for (const e of entries) {
      const size = JSON.stringify(e).length + 1;
      if (bytes + size > RELAY_BATCH_BYTES && batch.length > 0) {
        this.cluster?.publish('realtime', batch);
        batch = [];
        bytes = 0;
      }
      batch.push(e);
      bytes += size;
    }
    if (batch.length > 0) this.cluster?.publish('realtime', batch);
  }

  /** The screens module installs the device-credential check. */
  setAuthenticator(authenticator: SocketAuthenticator): void {
    this.authenticator = authenticator;
  }

  /** Number of open sockets (all screens, or one). */
  count(screenId?: string): number {
    if (screenId) return this.channels.get(screenId)?.size ?? 0;
    let n = 0;
    for (const set of this.channels.values()) n += set.size;
    return n;
  }

  /** Screens with at least one open socket. */
  connectedScreens(): string[] {
    return [...this.channels.entries()].filter(([, s]) => s.size > 0).map(([id]) => id);
  }

  /** Pushes a message to every socket of one screen, on every instance; answers how many here received it. */
  send(screenId: string, message: RealtimeMessage): number {
    this.relay(['s', screenId, message]);
    return this.sendHere(screenId, message);
  }

  private sendHere(screenId: string, message: RealtimeMessage): number {
    const set = this.channels.get(screenId);
    if (!set) return 0;
    const text = JSON.stringify(message);
    let sent = 0;
    for (const client of set) {
      if (client.ws.readyState !== WebSocket.OPEN) continue;
      if (client.ready) client.ws.send(text);
      else client.held.push(text); // sent right after its hello
      sent++;
    }
    return sent;
  }

  /**
   * Tells a screen its manifest changed (`{type: 'manifest.changed', revision}`): at once while
   * the line has room, else in turn (fetch-line.ts: the window of screens told and still to
   * fetch adapts to the server; a told screen's fetch, `fetched`, tells the next). A change
   * reaching 10,000 screens then reaches them as fast as the server serves their fetches, and
   * heartbeats do not queue behind 10,000 requests arriving at once; a change reaching a few
   * screens is told at once, as before. No socket: nothing to do.
   */
  pushManifestChanged(screenId: string, revision: number): void {
    this.relay(['m', screenId, revision]);
    this.pushHere(screenId, revision);
  }

  private pushHere(screenId: string, revision: number): void {
    if (this.channels.has(screenId)) this.line.push(screenId, revision);
  }

  /** The screen fetched its manifest at `revision` (the manifest route): its place in the line goes to the next. */
  fetched(screenId: string, revision: number): void {
    this.line.fetched(screenId, revision);
  }

  /** Screens told and still to fetch, screens waiting, and the line's window now (tests, benches). */
  manifestPushes(): { fetching: number; waiting: number; window: number } {
    return this.line.counts();
  }

  /**
   * Closes every socket of a screen at once (revoked, disabled), or, with
   * `exceptCredentialId`, those opened with any other credential (the screen enrolled
   * again: its earlier credential is revoked).
   */
  closeScreen(screenId: string, code: number, reason: string, options: { exceptCredentialId?: string } = {}): number {
    this.relay(['c', screenId, code, reason, options.exceptCredentialId ?? null]);
    return this.closeHere(screenId, code, reason, options);
  }

  private closeHere(screenId: string, code: number, reason: string, options: { exceptCredentialId?: string }): number {
    const set = this.channels.get(screenId);
    if (!set) return 0;
    let closed = 0;
    for (const client of set) {
      if (options.exceptCredentialId !== undefined && client.identity.credentialId === options.exceptCredentialId) continue;
      client.ws.close(code, reason);
      closed++;
    }
    return closed;
  }

  /** For `server.on('upgrade')`: authenticates, then completes the handshake or refuses it. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', destroySocket);
    const url = new URL(req.url ?? '/', 'http://placeholder');
    if (url.pathname !== PLAYER_SOCKET_PATH) {
      refuse(socket, 404, new ApiError('not_found', `No WebSocket at ${url.pathname}`));
      return;
    }
    const token = credentialOf(req);
    if (!token || !this.authenticator) {
      refuse(socket, 401, new ApiError('unauthenticated', 'The socket needs a device credential (Authorization header or bearer.<credential> subprotocol)'));
      return;
    }
    this.authenticator(token).then(
      (identity) => {
        this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws, identity, token));
      },
      (err: unknown) => {
        const apiError = err instanceof ApiError ? err : new ApiError('internal', 'The credential could not be checked');
        if (!(err instanceof ApiError)) this.logger.error({ err }, 'socket authentication failed');
        refuse(socket, apiError.status, apiError);
      },
    );
  }

  /**
   * Registers the socket on its screen's channel, then checks the credential once more:
   * a revoke or disable that ran between the first check and the registration found no
   * socket to close, so this check closes it (4001 revoked or unknown, 4003 disabled). Any
   * later one finds it in the channel. `hello` (with the revision read now) follows the
   * second check; pushes meanwhile are held and sent after it.
   */
  private accept(ws: WebSocket, identity: SocketIdentity, token: string): void {
    const client: Client = { ws, identity, alive: true, ready: false, held: [] };
    let set = this.channels.get(identity.screenId);
    if (!set) {
      set = new Set();
      this.channels.set(identity.screenId, set);
    }
    set.add(client);
    this.ensurePinging();
    ws.on('pong', () => {
      client.alive = true;
    });
    ws.on('message', (data) => {
      // Players may send {"type":"ping"}; anything else is ignored (commands go over HTTP).
      client.alive = true;
      try {
        const msg = JSON.parse(String(data)) as { type?: unknown };
        if (msg.type === 'ping') ws.send(JSON.stringify({ type: 'pong', serverTime: new Date().toISOString() }));
      } catch {
        /* not JSON: ignored */
      }
    });
    ws.on('error', () => ws.terminate());
    ws.on('close', () => {
      set.delete(client);
      if (set.size === 0 && this.channels.get(identity.screenId) === set) this.channels.delete(identity.screenId);
    });
    const authenticator = this.authenticator;
    if (!authenticator) {
      ws.close(1011, 'no credential check installed');
      return;
    }
    authenticator(token).then(
      (again) => {
        if (ws.readyState !== WebSocket.OPEN) return;
        if (again.screenId !== identity.screenId || again.credentialId !== identity.credentialId) {
          ws.close(CLOSE_CODES.revoked, 'credential changed');
          return;
        }
        ws.send(JSON.stringify({ type: 'hello', screenId: identity.screenId, serverTime: new Date().toISOString(), manifestRevision: again.manifestRevision }));
        client.ready = true;
        for (const text of client.held.splice(0)) ws.send(text);
      },
      (err: unknown) => {
        if (!(err instanceof ApiError)) this.logger.error({ err }, 'socket re-authentication failed');
        const code = closeCodeOf(err);
        ws.close(code, code === CLOSE_CODES.disabled ? 'screen disabled' : code === CLOSE_CODES.revoked ? 'credential revoked' : 'credential check failed');
      },
    );
  }

  private ensurePinging(): void {
    if (this.pingTimer) return;
    this.pingTimer = setInterval(() => {
      // One text for the whole pass (at 10,000 sockets a Date and a stringify each add up).
      const ping = JSON.stringify({ type: 'ping', serverTime: new Date().toISOString() });
      for (const set of this.channels.values()) {
        for (const client of set) {
          if (!client.alive) {
            client.ws.terminate();
            continue;
          }
          client.alive = false;
          client.ws.ping();
          if (client.ready && client.ws.readyState === WebSocket.OPEN) client.ws.send(ping);
        }
      }
    }, this.pingIntervalMs);
    this.pingTimer.unref();
  }

  /** Closes every socket (server shutdown). */
  close(): void {
    if (this.pingTimer) clearInterval(this.pingTimer);
    this.pingTimer = null;
    this.line.close();
    for (const set of this.channels.values()) for (const client of set) client.ws.close(CLOSE_CODES.shutdown, 'server stopping');
    for (const set of this.channels.values()) for (const client of set) client.ws.terminate();
    this.channels.clear();
  }
}

/**
 * A socket's error handler outside handleUpgrade: a closure there would share that call's
 * scope and keep the upgrade request (and its headers) alive for as long as the socket is
 * open (a heap snapshot of 3,000 players held 3,000 of them this way).
 */
function destroySocket(this: Duplex): void {
  this.destroy();
}

/** The credential from `Authorization: Bearer ...` or the `bearer.<credential>` subprotocol. */
export function credentialOf(req: IncomingMessage): string | null {
  const header = req.headers.authorization;
  if (header) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    return m?.[1] ?? null;
  }
  const protocols = String(req.headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((p) => p.trim());
  const bearer = protocols.find((p) => p.startsWith('bearer.'));
  if (!bearer || !protocols.includes(PLAYER_SUBPROTOCOL)) return null;
  return bearer.slice('bearer.'.length);
}

function refuse(socket: Duplex, status: number, error: ApiError): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify(error.toBody());
  const reason = { 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 429: 'Too Many Requests', 500: 'Internal Server Error' }[status] ?? 'Error';
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}
