/**
 * Tests never reach outside this machine: every TCP connection to anything but loopback
 * is refused before a packet leaves. Tests that need an outside service start a local
 * fake one. Imported by the harness, so every test file that uses it is covered.
 */
import net from 'node:net';

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|::1|::ffff:127(?:\.\d{1,3}){3}|\[::1\])$/i;

export class OutboundBlockedError extends Error {
  readonly code = 'EOUTBOUNDBLOCKED';
}

function targetHost(args: unknown[]): string | null {
  const first = args[0];
  if (Array.isArray(first)) return targetHost(first); // internal normalized form
  if (typeof first === 'object' && first !== null) {
    const o = first as { path?: string; host?: string };
    if (o.path) return null; // unix socket
    return o.host ?? 'localhost';
  }
  if (typeof first === 'string' && !/^\d+$/.test(first)) return null; // unix socket path
  return typeof args[1] === 'string' ? args[1] : 'localhost';
}

const original = net.Socket.prototype.connect;
const guarded = function (this: net.Socket, ...args: unknown[]) {
  const host = targetHost(args);
  if (host !== null && !LOOPBACK.test(host)) {
    throw new OutboundBlockedError(`outbound connection to ${host} blocked in tests`);
  }
  return (original as (...a: unknown[]) => net.Socket).apply(this, args);
} as typeof original;

if (!(net.Socket.prototype.connect as { __placardGuard?: boolean }).__placardGuard) {
  Object.assign(guarded, { __placardGuard: true });
  net.Socket.prototype.connect = guarded;
}
