import { spawnSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import './helpers/harness.js';

t.test('tests cannot reach outside this machine', async (t) => {
  // TEST-NET-1 (documentation range): refused by the guard before any packet is sent.
  const err = await fetch('http://192.0.2.1/').then(
    () => null,
    (e: Error & { cause?: Error & { code?: string } }) => e,
  );
  t.ok(err, 'fetch to a remote address fails');
  t.equal(err?.cause?.code, 'EOUTBOUNDBLOCKED', 'and it is the guard that refused it, not the network');
  t.throws(() => http.get('http://192.0.2.1/'), /blocked/);
});

t.test('a Node process a test starts is guarded too', async (t) => {
  const probe = `require('node:net').connect(80, '192.0.2.1').on('error', () => {});`;
  const child = spawnSync(process.execPath, ['-e', probe], { encoding: 'utf8' });
  t.not(child.status, 0, 'the child fails to connect');
  t.match(child.stderr, /outbound connection to 192\.0\.2\.1 blocked in tests/);
  const local = spawnSync(process.execPath, ['-e', `require('node:net').connect(1, '127.0.0.1').on('error', () => {})`], { encoding: 'utf8' });
  t.equal(local.status, 0, 'loopback stays allowed in the child');
});

t.test('loopback stays reachable (local fakes work)', async (t) => {
  const server = http.createServer((_req, res) => res.end('fake'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => server.close());
  const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  t.equal(await res.text(), 'fake');
});
