import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import t, { type Test } from 'tap';
import { OutboundError, safeFetch } from '../server/src/platform/http/outbound.js';
import './helpers/harness.js';

// What safeFetch gained for the release source (docs/player-releases.md): POST with a body,
// never redirected, and a streaming sink that keeps what arrived before a cut.

const policy = { allowPrivate: false, allowLoopback: true };

async function server(t: Test, handler: http.RequestListener): Promise<string> {
  const s = http.createServer(handler);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    s.closeAllConnections();
    s.close();
  });
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

function collector() {
  const chunks: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk);
      done();
    },
  });
  return { sink, bytes: () => Buffer.concat(chunks) };
}

t.test('POST sends its body with a length and is not redirected', async (t) => {
  const seen: { method?: string; length?: string; body: string }[] = [];
  const url = await server(t, async (req, res) => {
    let body = '';
    for await (const c of req) body += c;
    seen.push({ method: req.method, length: req.headers['content-length'], body });
    if (req.url === '/redirect') {
      res.writeHead(307, { location: '/elsewhere' });
      return res.end();
    }
    res.end('ok');
  });
  const res = await safeFetch(`${url}/token`, policy, { method: 'POST', body: 'a=1&b=2', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  t.equal(res.status, 200);
  t.same(seen[0], { method: 'POST', length: '7', body: 'a=1&b=2' });
  const redirected = await safeFetch(`${url}/redirect`, policy, { method: 'POST', body: 'secret=1' });
  t.equal(redirected.status, 307, 'the 3xx is answered as is');
  t.equal(seen.length, 2, 'the body was not sent elsewhere');
});

t.test('a sink receives a 2xx body; a cut keeps what arrived; maxBytes still caps', async (t) => {
  const body = Buffer.alloc(100_000, 7);
  const url = await server(t, (req, res) => {
    res.writeHead(200, { 'content-length': String(body.length) });
    if (req.url === '/cut') {
      res.write(body.subarray(0, 30_000), () => setTimeout(() => res.socket?.destroy(), 20));
      return;
    }
    res.end(body);
  });
  const whole = collector();
  const res = await safeFetch(`${url}/whole`, policy, { sink: whole.sink, maxBytes: body.length });
  t.equal(res.status, 200);
  t.equal(res.body.length, 0, 'nothing buffered');
  t.same(whole.bytes(), body);

  const cut = collector();
  const err = await safeFetch(`${url}/cut`, policy, { sink: cut.sink, maxBytes: body.length }).catch((e) => e);
  t.type(err, OutboundError);
  t.equal(err.code, 'connection_failed');
  t.equal(cut.bytes().length, 30_000, 'the bytes before the cut were written');

  const capped = collector();
  const big = await safeFetch(`${url}/whole`, policy, { sink: capped.sink, maxBytes: 1000 }).catch((e) => e);
  t.equal(big.code, 'too_large');
});
