import { type ChildNode, isTag, isText } from 'domhandler';
import { parseDocument } from 'htmlparser2';
import sanitizeHtml from 'sanitize-html';

/**
 * HTML found in feeds and calendars (issue 17): plain text for a screen, the first image, a
 * sanitized copy for rich-text columns, links resolved against the document's address.
 * Parsing is htmlparser2's (entities included); sanitizing is sanitize-html's allow list.
 */

/** `raw` as an absolute http(s) URL against `base`, or null (other schemes, garbage). */
export function resolveUrl(raw: string | null | undefined, base: string | null | undefined): string | null {
  const value = raw?.trim();
  if (!value) return null;
  let url: URL;
  try {
    url = base ? new URL(value, base) : new URL(value);
  } catch {
    return null;
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.toString() : null;
}

/** A base URL `relative` (an xml:base) resolved against `base`; `base` when it is absent or broken. */
export function resolveBase(relative: string | null | undefined, base: string | null | undefined): string | null {
  if (!relative?.trim()) return base ?? null;
  try {
    return new URL(relative.trim(), base ?? undefined).toString();
  } catch {
    return base ?? null;
  }
}

const BLOCK = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'br',
  'dd',
  'div',
  'dl',
  'dt',
  'figcaption',
  'figure',
  'footer',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'header',
  'hr',
  'li',
  'ol',
  'p',
  'pre',
  'section',
  'table',
  'tr',
  'ul',
]);
const SKIP = new Set(['script', 'style', 'noscript', 'template', 'head', 'title', 'iframe', 'object', 'svg']);

/** Looks like HTML: a tag or an entity. Plain text passes through htmlToText unchanged otherwise. */
export function looksLikeHtml(value: string): boolean {
  return /<\/?[a-z][^>]*>|&(#\d+|#x[0-9a-f]+|[a-z]{2,8});/i.test(value);
}

/**
 * The text a person reads in `html`: entities decoded, tags dropped, block elements as line
 * breaks (paragraphs separated by one blank line), runs of white space folded.
 */
export function htmlToText(html: string): string {
  const doc = parseDocument(html, { decodeEntities: true });
  const out: string[] = [];
  const walk = (nodes: ChildNode[]) => {
    for (const node of nodes) {
      if (isText(node)) out.push(node.data.replace(/\s+/g, ' '));
      else if (isTag(node)) {
        const name = node.name.toLowerCase();
        if (SKIP.has(name)) continue;
        const block = BLOCK.has(name);
        if (block) out.push('\n');
        if (name === 'p' || /^h[1-6]$/.test(name)) out.push('\n');
        walk(node.children);
        if (block) out.push('\n');
        if (name === 'p' || /^h[1-6]$/.test(name)) out.push('\n');
      }
    }
  };
  walk(doc.children);
  return out
    .join('')
    .split('\n')
    .map((line) => line.replace(/[ \t\u00a0]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** Text that may be HTML (an RSS title, an Atom text of type html) as plain text. */
export function plainText(value: string | null | undefined, isHtml = looksLikeHtml(value ?? '')): string | null {
  if (value == null) return null;
  const text = isHtml ? htmlToText(value) : value.replace(/\s+/g, ' ').trim();
  return text === '' ? null : text;
}

/** The first <img> of `html` with an http(s) source, resolved against `base`. */
export function firstImage(html: string | null | undefined, base: string | null | undefined): string | null {
  if (!html || !/<img/i.test(html)) return null;
  const doc = parseDocument(html, { decodeEntities: true });
  let found: string | null = null;
  const walk = (nodes: ChildNode[]) => {
    for (const node of nodes) {
      if (found || !isTag(node)) continue;
      if (node.name.toLowerCase() === 'img') {
        const src = node.attribs.src ?? node.attribs['data-src'] ?? null;
        found = resolveUrl(src, base);
        if (found) return;
      }
      walk(node.children);
    }
  };
  walk(doc.children);
  return found;
}

const RICH_TAGS = [...sanitizeHtml.defaults.allowedTags, 'img'];

/**
 * `html` reduced to an allow list of formatting tags (sanitize-html's defaults and img; no
 * scripts, styles, event handlers, iframes or forms), every link and image source absolute
 * (http, https, mailto for links). A screen may render it.
 */
export function sanitizeRichText(html: string, base: string | null | undefined): string {
  const absolute = (attr: 'href' | 'src') => (tagName: string, attribs: sanitizeHtml.Attributes) => {
    const value = attribs[attr];
    const next = { ...attribs };
    if (value !== undefined) {
      const resolved = attr === 'href' && /^mailto:/i.test(value.trim()) ? value.trim() : resolveUrl(value, base);
      if (resolved) next[attr] = resolved;
      else delete next[attr];
    }
    return { tagName, attribs: next };
  };
  return sanitizeHtml(html, {
    allowedTags: RICH_TAGS,
    allowedAttributes: { a: ['href', 'title'], img: ['src', 'alt', 'title', 'width', 'height'] },
    allowedSchemes: ['http', 'https', 'mailto'],
    allowedSchemesByTag: { img: ['http', 'https'] },
    allowProtocolRelative: false,
    transformTags: { a: absolute('href'), img: absolute('src') },
  }).trim();
}

/** Plain text as HTML: escaped, line breaks kept. */
export function textToHtml(text: string): string {
  const escaped = text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
  return escaped
    .split(/\n{2,}/)
    .map((p) => `<p>${p.replace(/\n/g, '<br>')}</p>`)
    .join('');
}
