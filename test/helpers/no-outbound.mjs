/**
 * Tests never reach outside this machine: every TCP connection to anything but loopback
 * is refused before a packet leaves. Tests that need an outside service start a local
 * fake one.
 *
 * Loaded into every test process by tap's node-arg (package.json), and by the harness for
 * a file run some other way. Plain JavaScript so that it needs no loader: once loaded it
 * adds itself to NODE_OPTIONS, so every Node process a test starts (a server under
 * SIGTERM or SIGKILL, the CLI, scripts) is guarded too.
 */
import net from 'node:net';
import { fileURLToPath } from 'node:url';

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|::1|::ffff:127(?:\.\d{1,3}){3}|\[::1\])$/i;

export class OutboundBlockedError extends Error {
  code = 'EOUTBOUNDBLOCKED';
}

function targetHost(args) {
  const first = args[0];
  if (Array.isArray(first)) return targetHost(first); // internal normalized form
  if (typeof first === 'object' && first !== null) {
    if (first.path) return null; // unix socket
    return first.host ?? 'localhost';
  }
  if (typeof first === 'string' && !/^\d+$/.test(first)) return null; // unix socket path
  return typeof args[1] === 'string' ? args[1] : 'localhost';
}

if (!net.Socket.prototype.connect.__placardGuard) {
  const original = net.Socket.prototype.connect;
  const guarded = function (...args) {
    const host = targetHost(args);
    if (host !== null && !LOOPBACK.test(host)) {
      throw new OutboundBlockedError(`outbound connection to ${host} blocked in tests`);
    }
    return original.apply(this, args);
  };
  guarded.__placardGuard = true;
  net.Socket.prototype.connect = guarded;

  const self = `--import="${fileURLToPath(import.meta.url)}"`;
  const current = process.env.NODE_OPTIONS ?? '';
  if (!current.includes(self)) process.env.NODE_OPTIONS = `${current} ${self}`.trim();
}
