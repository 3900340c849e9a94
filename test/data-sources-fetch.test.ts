import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import t, { type Test } from 'tap';
import { configJsonSchema } from '../server/src/modules/data-sources/catalog.routes.js';
import { csvProvider, icalProvider, rssProvider } from '../server/src/modules/data-sources/providers/index.js';
import { type FetchContext, type FetchOutcome, ProviderFetchError, type ProviderDefinition } from '../server/src/modules/data-sources/providers/types.js';

/**
 * The rss, csv and ical providers' fetch (remoteFetch + their parse) against local fake
 * servers (issue 17): conditional GET, unchanged bodies, failures with readable messages,
 * time and size limits, links resolved against the address after redirects.
 */

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const LOOPBACK = { allowPrivate: true, allowLoopback: true };
const fixture = (name: string) => fs.readFileSync(new URL(`./fixtures/data-sources/${name}`, import.meta.url));
const ctx = (extra: Partial<FetchContext> = {}): FetchContext => ({
  policy: LOOPBACK,
  timeZone: 'Europe/Berlin',
  now: new Date('2024-03-18T09:00:00Z'),
  ...extra,
});

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;
async function fakeServer(t: Test, routes: Record<string, Handler>) {
  const seen: http.IncomingHttpHeaders[] = [];
  const server = http.createServer((req, res) => {
    seen.push(req.headers);
    const handler = routes[req.url ?? '/'];
    if (handler) handler(req, res);
    else res.writeHead(404).end('nope');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const PROVIDERS = [
  {
    provider: rssProvider as ProviderDefinition<any>,
    doc: fixture('rss-media.xml'),
    type: 'application/rss+xml',
    malformed: '<html><body>Maintenance</body></html>',
  },
  { provider: csvProvider as ProviderDefinition<any>, doc: fixture('menu-semicolon.csv'), type: 'text/csv', malformed: '' },
  { provider: icalProvider as ProviderDefinition<any>, doc: fixture('studio.ics'), type: 'text/calendar', malformed: 'BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\n' },
];

for (const { provider, doc, type, malformed } of PROVIDERS) {
  t.test(`${provider.id}: fetch, conditional GET, unchanged body, failures`, async (t) => {
    const etag = '"v1"';
    const { base, seen } = await fakeServer(t, {
      '/etag': (req, res) => {
        if (req.headers['if-none-match'] === etag) return res.writeHead(304, { etag }).end();
        res.writeHead(200, { 'content-type': type, etag }).end(doc);
      },
      '/plain': (_req, res) => res.writeHead(200, { 'content-type': type }).end(doc),
      '/broken': (_req, res) => res.writeHead(500, { 'content-type': 'text/plain' }).end('Internal Server Error'),
      '/malformed': (_req, res) => res.writeHead(200, { 'content-type': type }).end(malformed),
      '/slow': () => {},
    });
    const config = (path: string, extra: Record<string, unknown> = {}) => provider.configSchema.parse({ url: `${base}${path}`, ...extra });
    const fetch = provider.fetch!;

    const first = await fetch(config('/etag'), ctx());
    t.equal(first.kind, 'data');
    const data = first as Extract<FetchOutcome, { kind: 'data' }>;
    t.ok(data.dataset.rows.length > 0, `${data.dataset.rows.length} rows`);
    t.equal(data.state.etag, etag, 'the ETag is kept for the next fetch');
    t.match(data.state.bodySha256, /^[0-9a-f]{64}$/);
    t.equal(data.attempt.status, 200);
    t.equal(data.attempt.error, null);
    t.match(seen.at(-1)?.accept, type.split('/')[1]!, 'asks for its kind of document');

    const again = await fetch(config('/etag'), ctx({ previous: data.state }));
    t.equal(again.kind, 'unchanged', 'If-None-Match answered 304: unchanged');
    t.equal(again.attempt.status, 304);
    t.equal(seen.at(-1)?.['if-none-match'], etag);

    const plain = await fetch(config('/plain'), ctx());
    t.equal(plain.kind, 'data');
    const same = await fetch(config('/plain'), ctx({ previous: plain.state }));
    t.equal(same.kind, 'unchanged', 'no ETag, the same body: unchanged all the same');
    t.equal(same.attempt.status, 200);

    const broken = await fetch(config('/broken'), ctx()).catch((e) => e);
    t.ok(broken instanceof ProviderFetchError);
    t.match(broken, { code: 'http_status', message: 'The server answered HTTP 500', attempt: { status: 500, errorCode: 'http_status' } });

    const bad = await fetch(config('/malformed'), ctx()).catch((e) => e);
    t.ok(bad instanceof ProviderFetchError);
    t.equal(bad.code, 'parse_failed');
    t.match(bad.message, /^The document could not be read: (the|it)/, `a sentence: "${bad.message}"`);
    t.equal(bad.attempt.error, bad.message);

    const started = Date.now();
    const slow = await fetch(config('/slow'), ctx({ timeoutMs: 300 })).catch((e) => e);
    t.match(slow, { code: 'timeout', attempt: { status: null, errorCode: 'timeout' } });
    t.ok(Date.now() - started < 3000, 'gave up after the time limit');
  });
}

t.test('a 50 MB answer is cut, not parsed', async (t) => {
  const chunk = Buffer.alloc(1024 * 1024, 'a');
  const { base } = await fakeServer(t, {
    '/huge.csv': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/csv', 'content-length': String(50 * chunk.length) });
      let sent = 0;
      const more = () => {
        while (sent < 50) {
          sent++;
          if (!res.write(chunk)) return res.once('drain', more);
        }
        res.end();
      };
      res.on('error', () => {});
      more();
    },
  });
  const err = await csvProvider.fetch!(csvProvider.configSchema.parse({ url: `${base}/huge.csv` }), ctx()).catch((e) => e);
  t.ok(err instanceof ProviderFetchError);
  t.match(err, { code: 'too_large', message: /larger than 10 MB; it was cut and not used/, attempt: { errorCode: 'too_large' } });
  t.ok(err.attempt.bytes <= 10 * 1024 * 1024 + 1, `read ${err.attempt.bytes} bytes at most`);
});

t.test('relative links resolve against the address the feed came from after redirects', async (t) => {
  const feed = `<?xml version="1.0"?><rss version="2.0"><channel><title>t</title><item><title>One</title><link>item/1</link><description>&lt;img src="../img/1.png"&gt;</description></item></channel></rss>`;
  const { base } = await fakeServer(t, {
    '/old-feed': (_req, res) => res.writeHead(301, { location: '/feeds/news.xml' }).end(),
    '/feeds/news.xml': (_req, res) => res.writeHead(200, { 'content-type': 'application/xml' }).end(feed),
  });
  const out = await rssProvider.fetch!(rssProvider.configSchema.parse({ url: `${base}/old-feed` }), ctx());
  t.equal(out.kind, 'data');
  const row = (out as Extract<FetchOutcome, { kind: 'data' }>).dataset.rows[0]!;
  t.equal(row.link, `${base}/feeds/item/1`);
  t.equal(row.image, `${base}/img/1.png`);
});

t.test('credentials from the config are sent', async (t) => {
  const { base, seen } = await fakeServer(t, {
    '/cal.ics': (_req, res) => res.writeHead(200, { 'content-type': 'text/calendar' }).end(fixture('studio.ics')),
  });
  await icalProvider.fetch!(
    icalProvider.configSchema.parse({
      url: `${base}/cal.ics`,
      auth: { type: 'basic', username: 'studio', password: 's3cret' },
      headers: { 'X-Api-Key': 'k1' },
    }),
    ctx(),
  );
  t.equal(seen.at(-1)?.authorization, `Basic ${Buffer.from('studio:s3cret').toString('base64')}`);
  t.equal(seen.at(-1)?.['x-api-key'], 'k1');
});

t.test('the catalog can show each provider: its config as a JSON Schema that agrees with the server, secrets, needs, refresh bounds', async (t) => {
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
  const url = 'https://example.com/feed';
  const samples: [ProviderDefinition<any>, unknown, boolean][] = [
    [rssProvider, { url }, true],
    [rssProvider, { url, maxItems: 10, headers: { 'X-Api-Key': 'k' }, auth: { type: 'bearer', token: 't' } }, true],
    [rssProvider, { url, maxItems: 0 }, false],
    [rssProvider, { url: 'ftp://example.com/feed' }, false],
    [rssProvider, {}, false],
    [csvProvider, { url, hasHeader: false, delimiter: '\t', encoding: 'windows-1252', decimalSeparator: ',', maxRows: 100_000 }, true],
    [csvProvider, { url, delimiter: ':' }, false],
    [csvProvider, { url, maxRows: 100_001 }, false],
    [csvProvider, { url, hasHeader: 'yes' }, false],
    [icalProvider, { url, daysAhead: 366, daysBehind: 7, maxOccurrences: 5000 }, true],
    [icalProvider, { url, daysAhead: 367 }, false],
    [icalProvider, { url, maxOccurrences: 1.5 }, false],
    [icalProvider, { url, auth: { type: 'basic', username: 'u' } }, false],
  ];
  for (const [p, config, good] of samples) {
    const schema = configJsonSchema(p.configSchema);
    t.equal(ajv.validate(schema, config), good, `${p.id} ${JSON.stringify(config)}: the JSON Schema says ${good ? 'valid' : 'invalid'}`);
    t.equal(p.configSchema.safeParse(config).success, good, '...and so does the server');
  }
  for (const p of [rssProvider, csvProvider, icalProvider] as ProviderDefinition<any>[]) {
    const schema = configJsonSchema(p.configSchema) as { required?: string[] };
    t.same(schema.required, ['url'], `${p.id}: only the url is required`);
    t.same(p.secretPaths, ['headers.*', 'auth.password', 'auth.token']);
    t.ok(p.needs.length > 0 && p.name && p.description);
    t.ok(p.refresh && p.refresh.minSec <= p.refresh.defaultSec && p.refresh.defaultSec <= p.refresh.maxSec, `${p.id}: refresh bounds in order`);
  }
});
