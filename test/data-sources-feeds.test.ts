import fs from 'node:fs';
import t from 'tap';
import { feedDateToIso } from '../server/src/modules/data-sources/providers/dates.js';
import { RSS_COLUMNS, parseRss, rssConfigSchema } from '../server/src/modules/data-sources/providers/rss.js';

/** The rss provider's parse (issue 17): RSS 2.0, Atom and JSON Feed documents shaped like real ones (fixtures written for these tests). */

const fixture = (name: string) => fs.readFileSync(new URL(`./fixtures/data-sources/${name}`, import.meta.url));
const ctx = { timeZone: 'Europe/Berlin' };
const parse = (body: Buffer | string, url?: string, maxItems = 50, contentType: string | null = null) =>
  parseRss(typeof body === 'string' ? Buffer.from(body) : body, contentType, { maxItems }, ctx, url);

t.test('RSS 2.0 with enclosures, Media RSS, iTunes, content:encoded and relative links', async (t) => {
  const d = parse(fixture('rss-media.xml'), 'https://gazette.example.org/feed/');
  t.same(d.columns, RSS_COLUMNS, 'the fixed columns, typed');
  t.equal(d.rows.length, 5, 'the item with nothing in it is not a row');
  const [cafe, pool, podcast, festival, market] = d.rows as any[];
  t.same(cafe, {
    title: 'Café extends hours: open “late” on Fridays',
    summary: 'The café by the bridge stays open until 23:00 & serves tapas.',
    summaryHtml: '<p>The café by the bridge stays open <a href="https://gazette.example.org/hours/">until 23:00</a> &amp; serves <em>tapas</em>.</p>',
    link: 'https://gazette.example.org/2024/03/05/cafe-late-fridays/',
    published: '2024-03-05T08:30:00.000Z',
    author: 'Ana Ruiz',
    image: 'https://gazette.example.org/wp-content/uploads/2024/03/cafe-1024x683.jpg',
    guid: 'https://gazette.example.org/?p=4812',
  });
  t.notMatch(cafe.summaryHtml, /script|alert|onerror/, 'scripts and handlers never reach the rich text');
  t.equal(pool.published, '2024-03-04T16:05:00.000Z', 'CET, a zone name RFC 822 never listed');
  t.equal(pool.author, 'News Desk', 'the name of "address (Name)"');
  t.equal(pool.image, 'https://cdn.example.org/img/pool.jpg', 'an image enclosure');
  t.equal(podcast.published, '2024-03-03T13:00:00.000Z', 'a wrong weekday does not lose the date (EST)');
  t.equal(podcast.image, 'https://cdn.example.org/img/ep12-cover.png', 'audio enclosure skipped, itunes:image taken');
  t.equal(podcast.author, 'Town Hall');
  t.equal(festival.image, 'https://cdn.example.org/img/festival-thumb.jpg', 'the thumbnail of a video in a media:group');
  t.equal(market.image, 'https://cdn.example.org/img/market.webp', 'media:content of medium image before its thumbnail');
  t.equal(market.published, '2024-03-01T07:45:00.000Z', 'dc:date');
  t.equal(market.guid, market.link, 'no guid: the link identifies the item');
  t.same(d.warnings, []);
});

t.test('maxItems keeps the first items and says so', async (t) => {
  const d = parse(fixture('rss-media.xml'), 'https://gazette.example.org/feed/', 2);
  t.same(
    d.rows.map((r) => r.title),
    ['Café extends hours: open “late” on Fridays', 'Pool closed for repairs'],
  );
  t.match(d.warnings, [/5 items; the first 2 are kept/]);
});

t.test('Atom with xml:base, xhtml and html content, a Media RSS thumbnail', async (t) => {
  const d = parse(fixture('atom-xhtml.xml'), 'https://elsewhere.example/feed.atom');
  t.same(d.rows, [
    {
      title: 'Spring menu is here',
      summary: 'New dishes & drinks for the season.',
      summaryHtml: '<p>New dishes &amp; drinks for the season.</p>',
      link: 'https://blog.example.com/posts/spring-menu',
      published: '2024-03-05T09:00:00.000Z',
      author: 'Kim Lee',
      image: 'https://blog.example.com/posts/img/spring-menu.png',
      guid: 'tag:blog.example.com,2024:post-31',
    },
    {
      title: 'Opening hours at Easter',
      summary: 'Closed on Easter Monday.',
      summaryHtml: '<p>Closed on <b>Easter Monday</b>.</p><img src="https://blog.example.com/img/easter.jpg" />',
      link: 'https://blog.example.com/easter-hours',
      published: '2024-03-04T08:00:00.000Z',
      author: 'The Kitchen',
      image: 'https://blog.example.com/img/easter.jpg',
      guid: 'urn:uuid:2b0a9c0e-8f6a-4d1e-9b1a-5f0c2e7d1a11',
    },
    {
      title: 'Behind the scenes (video)',
      summary: null,
      summaryHtml: null,
      link: 'https://video.example.com/watch?v=dQw4w9WgXcQ',
      published: '2024-03-02T15:00:00.000Z',
      author: 'The Kitchen',
      image: 'https://i.video.example.com/vi/dQw4w9WgXcQ/hqdefault.jpg',
      guid: 'yt:video:dQw4w9WgXcQ',
    },
  ]);
  t.same(d.warnings, []);
});

t.test('JSON Feed 1.1: summary, content_html and content_text, image, banner_image, authors', async (t) => {
  const d = parse(fixture('jsonfeed-1.1.json'), 'https://gym.example.net/feed.json', 50, 'application/feed+json');
  const [spin, sauna, marathon] = d.rows as any[];
  t.same(spin, {
    title: 'New spin class on Thursdays',
    summary: 'A new spin class starts in March.',
    summaryHtml: '<p>From March: <strong>spin</strong> at 19:00.</p><img src="https://gym.example.net/media/spin.jpg" alt="" />',
    link: 'https://gym.example.net/news/new-spin-class',
    published: '2024-03-04T17:20:00.000Z',
    author: 'Sam',
    image: 'https://gym.example.net/media/spin-wide.jpg',
    guid: 'https://gym.example.net/news/new-spin-class',
  });
  t.equal(sauna.summary, 'The sauna is closed for maintenance. Back on Monday.');
  t.equal(sauna.summaryHtml, '<p>The sauna is closed for maintenance.</p><p>Back on Monday.</p>', 'plain text as escaped paragraphs');
  t.equal(sauna.link, 'https://gym.example.net/news/sauna', 'relative url resolved');
  t.equal(sauna.image, 'https://gym.example.net/media/sauna-banner.jpg', 'banner_image when there is no image');
  t.equal(sauna.published, '2024-03-03T09:00:00.000Z', 'date_modified when there is no date_published');
  t.equal(sauna.author, 'Front desk', "the feed's author");
  t.equal(marathon.link, 'https://city.example.org/marathon', 'external_url');
  t.equal(marathon.image, 'https://city.example.org/map.png', 'a PDF attachment is no image; the first <img> is');
});

t.test('encodings: the XML declaration and the Content-Type charset are honoured', async (t) => {
  // latin1 cannot hold € or –: write the Windows-1252 bytes by hand.
  const bytes = Buffer.from(
    `<?xml version="1.0" encoding="windows-1252"?><rss version="2.0"><channel><title>Preise</title><item><title>Kaffee f\xfcr 2 \x80 \x96 heute</title><link>https://x.example/1</link></item></channel></rss>`,
    'latin1',
  );
  const declared = parse(bytes);
  t.equal(declared.rows[0]!.title, 'Kaffee für 2 € – heute', 'euro sign and dash from Windows-1252 (Node’s own decoder drops them)');
  t.same(declared.warnings, [], 'a declared encoding is no guess');
  const undeclared = parse(Buffer.from(bytes.toString('latin1').replace(' encoding="windows-1252"', ''), 'latin1'));
  t.equal(undeclared.rows[0]!.title, 'Kaffee für 2 € – heute', 'not UTF-8: read as Windows-1252');
  t.match(undeclared.warnings, [/read as Windows-1252/], 'and the guess is said');
});

t.test('dates of every common format become ISO instants', async (t) => {
  const cases: [string, string | null][] = [
    ['Tue, 05 Mar 2024 09:30:00 +0100', '2024-03-05T08:30:00.000Z'],
    ['Tue, 5 Mar 24 09:30:00 GMT', '2024-03-05T09:30:00.000Z'],
    ['Wed, 05 Mar 2024 09:30:00 GMT', '2024-03-05T09:30:00.000Z'],
    ['Tuesday, 05 March 2024 09:30:00 +0100', '2024-03-05T08:30:00.000Z'],
    ['Tue, 05 Mar 2024 09:30:00 CEST', '2024-03-05T07:30:00.000Z'],
    ['Tue, 05 Mar 2024 09:30:00 PST', '2024-03-05T17:30:00.000Z'],
    ['Tue, 05 Mar 2024 09:30:00 UTC', '2024-03-05T09:30:00.000Z'],
    ['Tue, 05 Mar 2024 09:30:00 +01:00', '2024-03-05T08:30:00.000Z'],
    ['05 Mar 2024 09:30 Z', '2024-03-05T09:30:00.000Z'],
    ['2024-03-05T09:30:00.250+01:00', '2024-03-05T08:30:00.250Z'],
    ['2024-03-05T09:30:00Z', '2024-03-05T09:30:00.000Z'],
    ['2024-03-05', '2024-03-04T23:00:00.000Z'],
    ['2024-03-05 09:30:00', '2024-03-05T08:30:00.000Z'],
    ['March 5, 2024 09:30', '2024-03-05T08:30:00.000Z'],
    ['', null],
    ['soon', null],
    ['1', null],
    ['Version 2', null],
  ];
  for (const [raw, want] of cases) t.equal(feedDateToIso(raw, 'Europe/Berlin'), want, JSON.stringify(raw));
});

t.test('bad documents are refused with a sentence that says why', async (t) => {
  t.throws(() => parse(''), { message: 'the document is empty' });
  t.throws(() => parse('   \n  '), { message: 'the document is empty' });
  t.throws(() => parse('<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><g/></svg>'), {
    message: 'it is not an RSS, Atom or JSON Feed document (its root element is <svg>)',
  });
  t.throws(() => parse('<!DOCTYPE html><html><head><title>News</title></head><body>hi</body></html>'), { message: /an HTML page, not a feed/ });
  t.throws(() => parse('{"data": [1, 2]}'), { message: /JSON but not a JSON Feed/ });
  t.throws(() => parse('{"version": "https://jsonfeed.org/version/1.1", "items": ['), { message: /not valid JSON/ });
  t.throws(() => parse('just words'), { message: /not an RSS, Atom or JSON Feed document/ });
  const bomb = `<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><rss version="2.0"><channel><title>x</title><item><title>&c;&c;&c;</title></item></channel></rss>`;
  const d = parse(bomb);
  t.ok(String(d.rows[0]?.title ?? '').length < 100, 'entities of a DOCTYPE are not expanded (no billion laughs)');
});

t.test('config schema', async (t) => {
  const ok = rssConfigSchema.safeParse({ url: 'https://news.example.org/feed' });
  t.ok(ok.success);
  t.equal(ok.data?.maxItems, 50, 'maxItems defaults to 50');
  t.notOk(rssConfigSchema.safeParse({ url: 'ftp://news.example.org/feed' }).success, 'only http(s)');
  t.notOk(rssConfigSchema.safeParse({ url: 'https://x.example', maxItems: 0 }).success, 'maxItems at least 1');
  t.notOk(rssConfigSchema.safeParse({ url: 'https://x.example', maxItems: 1001 }).success, 'maxItems at most 1000');
  t.notOk(rssConfigSchema.safeParse({ url: 'https://x.example', maxItems: 2.5 }).success, 'maxItems whole');
  t.notOk(rssConfigSchema.safeParse({ url: 'https://x.example', headers: { 'bad header': 'x' } }).success, 'header names checked');
  t.notOk(rssConfigSchema.safeParse({}).success, 'url required');
});
