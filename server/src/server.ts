import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import type { RealtimeHub } from './platform/realtime/hub.js';

export interface RunningServer {
  server: http.Server | https.Server;
  /** e.g. http://127.0.0.1:41234 (https://... for a TLS listener) */
  url: string;
  port: number;
  /**
   * Stops accepting connections, lets in-flight requests finish (idle keep-alive
   * connections are closed at once), and after `timeoutMs` closes whatever is left.
   */
  close(timeoutMs?: number): Promise<void>;
}

/** A connection silent (no bytes either way) this long is closed; player sockets ping every 25 s. */
export const IDLE_TIMEOUT_MS = 15 * 60_000;

/** PEM key and certificate (chain) of a TLS listener. */
export interface TlsFiles {
  key: string;
  cert: string;
}

/** Serves `app` on host:port, over TLS when `tls` is given (the same app on both listeners). */
export async function listen(app: Koa, host: string, port: number, defaultTimeoutMs = 10_000, tls?: TlsFiles): Promise<RunningServer> {
  const server = tls ? https.createServer({ key: tls.key, cert: tls.cert }, app.callback()) : http.createServer(app.callback());
  // WebSocket upgrades (the player socket) go to the realtime hub, which checks the
  // device credential before the handshake; without a hub every upgrade is refused.
  const realtime = (app.context as { realtime?: RealtimeHub }).realtime;
  server.on('upgrade', (req, socket, head) => {
    if (realtime) realtime.handleUpgrade(req, socket, head);
    else socket.destroy();
  });
  server.keepAliveTimeout = 5_000;
  // No deadline on a whole request: a tus PATCH, a backup upload or the mirroring receiver
  // can take longer than Node's 300 s on a slow link. A connection that sends or receives
  // nothing for IDLE_TIMEOUT_MS is closed instead (past the 10 minutes a maintenance
  // request with `wait` may stay silent); headers must still arrive within 60 s.
  server.requestTimeout = 0;
  server.setTimeout(IDLE_TIMEOUT_MS);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closing: Promise<void> | null = null;
  return {
    server,
    port: address.port,
    url: `${tls ? 'https' : 'http'}://${shownHost === '0.0.0.0' ? '127.0.0.1' : shownHost}:${address.port}`,
    close(timeoutMs = defaultTimeoutMs) {
      closing ??= new Promise<void>((resolve) => {
        const timer = setTimeout(() => server.closeAllConnections(), timeoutMs);
        timer.unref();
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        server.closeIdleConnections();
        // Two listeners share one hub: the first to close stops it (both close together).
        realtime?.close();
      });
      return closing;
    },
  };
}
