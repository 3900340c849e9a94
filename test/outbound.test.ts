import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import './helpers/harness.js';

t.test('tests cannot reach outside this machine', async (t) => {
  // TEST-NET-1 (documentation range): refused by the guard before any packet is sent.
  await t.rejects(fetch('http://192.0.2.1/'), 'fetch to a remote address fails');
  t.throws(() => http.get('http://192.0.2.1/'), /blocked/);
});

t.test('loopback stays reachable (local fakes work)', async (t) => {
  const server = http.createServer((_req, res) => res.end('fake'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => server.close());
  const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  t.equal(await res.text(), 'fake');
});
