import { type AtomFeed, DetectError, type JsonFeed, parseFeed, type RdfFeed, type RssFeed } from 'feedsmith';
import { IANAZone } from 'luxon';
import { feedDateToIso } from './dates.js';
import { charsetOf, decodeText, guessedEncodingWarning, xmlDeclaredEncoding } from './decode.js';
import { firstImage, plainText, resolveBase, resolveUrl, sanitizeRichText, textToHtml } from './html.js';
import { RSS_COLUMNS, type RssConfig } from './rss.config.js';
import type { Dataset, FetchContext, Row } from './types.js';

export { RSS_COLUMNS, type RssConfig, rssConfigSchema } from './rss.config.js';

/**
 * The `rss` provider (issue 17, spec 4.5): RSS 2.0 (and 0.9x, RDF 1.0), Atom 1.0 and JSON
 * Feed 1.0/1.1, told apart from the document itself (feedsmith detects and parses; nothing
 * here reads XML). One row per item: title and summary as plain text, the summary's HTML
 * sanitized, link, published (ISO UTC), author, an image (enclosure, Media RSS, iTunes,
 * JSON Feed image/banner_image, else the first <img> of the content) and the item's id.
 * Links resolve against xml:base where the feed has one, else the feed's own address.
 */

interface Item {
  title: string | null;
  summary: string | null;
  summaryHtml: string | null;
  link: string | null;
  published: string | null;
  author: string | null;
  image: string | null;
  guid: string | null;
}

const IMAGE_EXT = /\.(png|jpe?g|gif|webp|avif)(\?|#|$)/i;
const isImageType = (type: string | undefined, url: string | undefined) => (type ? /^image\//i.test(type) : IMAGE_EXT.test(url ?? ''));

/** An HTML fragment's summary: text for the screen, the sanitized HTML, its first image. */
function summaryOf(html: string | null | undefined, base: string | null, isHtml = true) {
  if (!html?.trim()) return { summary: null, summaryHtml: null };
  if (!isHtml) return { summary: plainText(html, false), summaryHtml: textToHtml(html.trim()) };
  return { summary: plainText(html, true), summaryHtml: sanitizeRichText(html, base) || null };
}

type MediaHolder = {
  contents?: { url?: string; type?: string; medium?: string; thumbnails?: { url?: string }[] }[];
  thumbnails?: { url?: string }[];
  groups?: MediaHolder[];
};

/** Media RSS: an image content, else a thumbnail (of the item, a group or a content). */
function mediaImage(media: MediaHolder | undefined, base: string | null): string | null {
  if (!media) return null;
  const holders = [media, ...(media.groups ?? [])];
  for (const h of holders)
    for (const c of h.contents ?? [])
      if (c.medium === 'image' || isImageType(c.type, c.url)) {
        const u = resolveUrl(c.url, base);
        if (u) return u;
      }
  for (const h of holders) {
    for (const t of h.thumbnails ?? []) {
      const u = resolveUrl(t.url, base);
      if (u) return u;
    }
    for (const c of h.contents ?? [])
      for (const t of c.thumbnails ?? []) {
        const u = resolveUrl(t.url, base);
        if (u) return u;
      }
  }
  return null;
}

/** "editor@example.org (Ana Ruiz)" -> "Ana Ruiz"; a bare address stays. */
function personName(value: string | null | undefined): string | null {
  const v = value?.trim();
  if (!v) return null;
  const m = /^\S+@\S+\s*\((.+)\)$/.exec(v);
  return m ? m[1]!.trim() : v;
}

function rssItem(item: RssFeed.Item<string> | RdfFeed.Item<string>, base: string | null, zone: string): Item {
  const itemBase = resolveBase(item.xml?.base, base);
  const description = item.description;
  const encoded = item.content?.encoded;
  const { summary, summaryHtml } = summaryOf(description ?? encoded, itemBase);
  const rss = item as RssFeed.Item<string>;
  const guid = rss.guid?.value ?? null;
  const permalink = guid && rss.guid?.isPermaLink !== false ? resolveUrl(guid, itemBase) : null;
  const enclosure = rss.enclosures?.find((e) => isImageType(e.type, e.url));
  const author = rss.authors?.map((a) => a.name ?? a.email).find(Boolean) ?? item.dc?.creators?.[0] ?? rss.itunes?.author;
  return {
    title: plainText(item.title),
    summary,
    summaryHtml,
    link: resolveUrl(item.link, itemBase) ?? permalink ?? resolveUrl(item.atom?.links?.[0]?.href, itemBase),
    published: feedDateToIso(rss.pubDate ?? item.dc?.dates?.[0] ?? item.dcterms?.modified?.[0], zone),
    author: personName(author),
    image:
      resolveUrl(enclosure?.url, itemBase) ??
      mediaImage(item.media, itemBase) ??
      resolveUrl(rss.itunes?.image, itemBase) ??
      firstImage(encoded, itemBase) ??
      firstImage(description, itemBase),
    guid: guid ?? resolveUrl(item.link, itemBase),
  };
}

function atomText(text: AtomFeed.Text | undefined): string | null {
  if (!text) return null;
  return plainText(text.value, text.type === 'html' || text.type === 'xhtml');
}

function atomItem(entry: AtomFeed.Entry<string>, feed: AtomFeed.Feed<string>, base: string | null, zone: string): Item {
  const entryBase = resolveBase(entry.xml?.base, base);
  const link =
    entry.links?.find((l) => (!l.rel || l.rel === 'alternate') && (!l.type || /html/i.test(l.type))) ??
    entry.links?.find((l) => !l.rel || l.rel === 'alternate');
  const body = entry.summary ?? (entry.content?.src ? undefined : entry.content);
  const bodyBase = resolveBase(body?.xml?.base, entryBase);
  const { summary, summaryHtml } = summaryOf(body?.value, bodyBase, body?.type === 'html' || body?.type === 'xhtml');
  const contentBase = resolveBase(entry.content?.xml?.base, entryBase);
  const enclosure = entry.links?.find((l) => l.rel === 'enclosure' && isImageType(l.type, l.href));
  const isHtml = (t: { type?: string } | undefined) => t?.type === 'html' || t?.type === 'xhtml';
  return {
    title: atomText(entry.title),
    summary,
    summaryHtml,
    link: resolveUrl(link?.href, entryBase),
    published: feedDateToIso(entry.published ?? entry.updated, zone),
    author: entry.authors?.[0]?.name ?? feed.authors?.[0]?.name ?? null,
    image:
      resolveUrl(enclosure?.href, entryBase) ??
      mediaImage(entry.media, entryBase) ??
      resolveUrl(entry.itunes?.image, entryBase) ??
      (isHtml(entry.content) ? firstImage(entry.content?.value, contentBase) : null) ??
      (isHtml(entry.summary) ? firstImage(entry.summary?.value, bodyBase) : null),
    guid: entry.id ?? null,
  };
}

function jsonItem(item: JsonFeed.Item<string>, feed: JsonFeed.Feed<string>, base: string | null, zone: string): Item {
  const html = item.content_html;
  const text = item.summary ?? (html ? null : item.content_text);
  const { summary, summaryHtml } = text ? summaryOf(text, base, false) : summaryOf(html, base);
  const legacy = item as { author?: { name?: string } };
  const feedLegacy = feed as { author?: { name?: string } };
  const attachment = item.attachments?.find((a) => isImageType(a.mime_type, a.url));
  return {
    title: plainText(item.title, false),
    summary,
    summaryHtml: html ? sanitizeRichText(html, base) || summaryHtml : summaryHtml,
    link: resolveUrl(item.url, base) ?? resolveUrl(item.external_url, base),
    published: feedDateToIso(item.date_published ?? item.date_modified, zone),
    author: item.authors?.[0]?.name ?? legacy.author?.name ?? feed.authors?.[0]?.name ?? feedLegacy.author?.name ?? null,
    image: resolveUrl(item.image, base) ?? resolveUrl(item.banner_image, base) ?? resolveUrl(attachment?.url, base) ?? firstImage(html, base),
    guid: item.id == null ? null : String(item.id),
  };
}

/** The name of a document's root element, for a message ("<svg>"), or null. */
function rootElement(text: string): string | null {
  const m = /^(?:\s|<\?[\s\S]*?\?>|<!--[\s\S]*?-->|<!DOCTYPE[^>[]*(?:\[[\s\S]*?\])?\s*>)*<([A-Za-z_][\w:.-]*)/i.exec(text);
  return m ? m[1]! : null;
}

/**
 * Parses a feed document (RSS, Atom or JSON Feed) into rows. Throws an Error whose message
 * says what is wrong in words an admin understands (remoteFetch puts it in the attempt).
 */
export function parseRss(
  body: Buffer,
  contentType: string | null,
  config: Pick<RssConfig, 'maxItems'>,
  ctx: Pick<FetchContext, 'timeZone'>,
  url?: string,
): Dataset {
  const warnings: string[] = [];
  if (body.length === 0) throw new Error('the document is empty');
  const decoded = decodeText(body, [xmlDeclaredEncoding(body), charsetOf(contentType)]);
  const guess = guessedEncodingWarning(decoded);
  if (guess) warnings.push(guess);
  const text = decoded.text;
  if (!text.trim()) throw new Error('the document is empty');
  const zone = IANAZone.isValidZone(ctx.timeZone) ? ctx.timeZone : 'UTC';
  const docUrl = url ?? null;

  let items: Item[];
  let value: unknown = text;
  if (/^\s*[[{]/.test(text)) {
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw new Error(`it looks like JSON but is not valid JSON (${(err as Error).message.replace(/\s+/g, ' ').slice(0, 200)})`);
    }
    const version = (value as { version?: unknown } | null)?.version;
    if (typeof version !== 'string' || !version.startsWith('https://jsonfeed.org/version/'))
      throw new Error('it is JSON but not a JSON Feed (no "version": "https://jsonfeed.org/version/1.1"); use the json provider for other JSON documents');
  }
  let parsed: ReturnType<typeof parseFeed>;
  try {
    parsed = parseFeed(value);
  } catch (err) {
    if (err instanceof DetectError) {
      const root = typeof value === 'string' ? rootElement(value) : null;
      if (root?.toLowerCase() === 'html') throw new Error('the address answered an HTML page, not a feed (look for the feed link on that page)');
      throw new Error(`it is not an RSS, Atom or JSON Feed document${root ? ` (its root element is <${root}>)` : ''}`);
    }
    throw new Error(`the feed could not be parsed (${(err as Error).message})`);
  }
  switch (parsed.format) {
    case 'rss':
    case 'rdf': {
      const feed = parsed.feed as RssFeed.Feed<string> | RdfFeed.Feed<string>;
      const base = resolveBase(feed.xml?.base, docUrl);
      items = (feed.items ?? []).map((i) => rssItem(i, base, zone));
      break;
    }
    case 'atom': {
      const feed = parsed.feed as AtomFeed.Feed<string>;
      const base = resolveBase(feed.xml?.base, docUrl);
      items = (feed.entries ?? []).map((e) => atomItem(e, feed, base, zone));
      break;
    }
    case 'json': {
      const feed = parsed.feed as JsonFeed.Feed<string>;
      const base = resolveBase(feed.feed_url, docUrl);
      items = (feed.items ?? []).map((i) => jsonItem(i, feed, base, zone));
      break;
    }
  }

  const usable = items.filter((i) => i.title || i.summary || i.link);
  if (usable.length < items.length) warnings.push(`${items.length - usable.length} item(s) had no title, summary or link and were left out`);
  if (usable.length > config.maxItems) warnings.push(`The feed has ${usable.length} items; the first ${config.maxItems} are kept (maxItems)`);
  const undated = usable.filter((i) => i.published === null).length;
  if (undated > 0 && undated < usable.length) warnings.push(`${undated} item(s) have no date that could be read`);
  const rows: Row[] = usable.slice(0, config.maxItems).map((i) => ({ ...i }));
  return { columns: RSS_COLUMNS.map((c) => ({ ...c })), rows, warnings };
}
