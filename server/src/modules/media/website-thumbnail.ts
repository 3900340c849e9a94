import fs from 'node:fs/promises';
import path from 'node:path';
import { loadSharp } from '../../platform/media/sharp.js';
import { OutboundError, safeFetch, type OutboundPolicy } from '../../platform/http/outbound.js';
import type { AppDeps } from '../../platform/app-deps.js';
import { nowIso } from '../../platform/db/ids.js';
import { hashFile, type MediaStore } from '../../platform/media/store.js';
import type { JobContext } from '../../platform/jobs/queue.js';
import { fetchPolicy } from './limits.js';
import { deleteVariantsOf, getAsset, insertMediaFile, insertVariant, listVariants, setAssetMetadata, websiteAndMetadata } from './media.repo.js';
import type { WebsiteSettings } from './media.schemas.js';

export const WEBSITE_THUMBNAIL_JOB = 'media.website-thumbnail';

/** Thumbnails are 400 × 250 (the library's 16:10 cards), WebP. */
const W = 400;
const H = 250;

/** Adds `https://` to an address typed without a scheme (`example.com/menu`); trims it. */
export function normaliseWebsiteUrl(raw: string): string {
  const s = raw.trim();
  if (!s) return s;
  // A scheme of its own (https://, ftp://, mailto:, javascript:) stays, to be judged as it is;
  // `host:8080/...` is a host and a port.
  if (/^[a-z][a-z0-9+.-]*:(?!\d)/i.test(s)) return s;
  if (s.startsWith('//')) return `https:${s}`;
  return `https://${s}`;
}

export interface PageFacts {
  title: string | null;
  /** Absolute URLs, best first: the page's preview picture (og:image), then its icons, largest first. */
  pictures: string[];
  icons: string[];
}

const decodeEntities = (s: string) =>
  s
    .replace(/&#(\d+);/g, (_, n: string) => String.fromCodePoint(Number(n)))
    .replace(/&#x([0-9a-f]+);/gi, (_, n: string) => String.fromCodePoint(parseInt(n, 16)))
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&nbsp;/g, ' ')
    .replace(/&amp;/g, '&');

function attrs(tag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of tag.matchAll(/([a-zA-Z:_-]+)\s*=\s*("([^"]*)"|'([^']*)'|([^\s>]+))/g)) out[m[1]!.toLowerCase()] = decodeEntities(m[3] ?? m[4] ?? m[5] ?? '');
  return out;
}

/** The title, preview picture and icons a page names in its <head> (relative URLs resolved against `base`). */
export function readPageFacts(html: string, base: string): PageFacts {
  const head = html.slice(0, 256 * 1024);
  const abs = (u: string | undefined) => {
    if (!u) return null;
    try {
      const url = new URL(u, base);
      return url.protocol === 'http:' || url.protocol === 'https:' ? url.toString() : null;
    } catch {
      return null;
    }
  };
  let title: string | null = null;
  const pictures: string[] = [];
  const icons: { url: string; size: number }[] = [];
  for (const m of head.matchAll(/<meta\b[^>]*>/gi)) {
    const a = attrs(m[0]);
    const key = (a.property ?? a.name ?? '').toLowerCase();
    if ((key === 'og:image' || key === 'og:image:url' || key === 'og:image:secure_url' || key === 'twitter:image') && a.content) {
      const u = abs(a.content);
      if (u && !pictures.includes(u)) pictures.push(u);
    }
    if (key === 'og:title' && a.content && !title) title = a.content.trim() || null;
  }
  const t = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(head);
  if (t) title = decodeEntities(t[1]!.replace(/\s+/g, ' ').trim()) || title;
  for (const m of head.matchAll(/<link\b[^>]*>/gi)) {
    const a = attrs(m[0]);
    const rel = (a.rel ?? '').toLowerCase().split(/\s+/);
    if (!rel.includes('icon') && !rel.includes('apple-touch-icon') && !rel.includes('apple-touch-icon-precomposed')) continue;
    const u = abs(a.href);
    if (!u) continue;
    const size =
      Math.max(0, ...((a.sizes ?? '').match(/\d+/g) ?? []).map(Number)) || (rel.includes('apple-touch-icon') ? 180 : a.type === 'image/svg+xml' ? 512 : 16);
    icons.push({ url: u, size });
  }
  icons.sort((x, y) => y.size - x.size);
  const iconUrls = icons.map((i) => i.url);
  const fallbackIcon = abs('/favicon.ico');
  if (fallbackIcon && !iconUrls.includes(fallbackIcon)) iconUrls.push(fallbackIcon);
  return { title: title ? title.slice(0, 200) : null, pictures, icons: iconUrls };
}

const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Cuts `s` to about `n` characters on a word, with an ellipsis. */
function clip(s: string, n: number): string {
  if (s.length <= n) return s;
  const cut = s.slice(0, n);
  const i = cut.lastIndexOf(' ');
  return `${(i > n * 0.6 ? cut.slice(0, i) : cut).trimEnd()}…`;
}

/** A card: the page's icon (when there is one) above its title and its address. */
async function card(host: string, title: string | null, icon: Buffer | null, note: string | null): Promise<Buffer> {
  const sharp = await loadSharp();
  const lines = title
    ? [clip(title, 34), ...(title.length > 34 ? [clip(title.slice(clip(title, 34).replace(/…$/, '').length).trim(), 34)] : [])].slice(0, 2)
    : [];
  const textTop = icon ? 168 : 110;
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}">
  <defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#1d3557"/><stop offset="1" stop-color="#2a6f97"/></linearGradient></defs>
  <rect width="${W}" height="${H}" fill="url(#g)"/>
  ${lines.map((l, i) => `<text x="${W / 2}" y="${textTop + i * 26}" font-family="DejaVu Sans, Liberation Sans, Arial, sans-serif" font-size="20" font-weight="bold" fill="#ffffff" text-anchor="middle">${xml(l)}</text>`).join('\n  ')}
  <text x="${W / 2}" y="${textTop + lines.length * 26 + (lines.length ? 6 : 0)}" font-family="DejaVu Sans, Liberation Sans, Arial, sans-serif" font-size="15" fill="#dbe9f4" text-anchor="middle">${xml(clip(host, 44))}</text>
  ${note ? `<text x="${W / 2}" y="${H - 14}" font-family="DejaVu Sans, Liberation Sans, Arial, sans-serif" font-size="12" fill="#b9cfe0" text-anchor="middle">${xml(clip(note, 56))}</text>` : ''}
</svg>`;
  let img = sharp(Buffer.from(svg));
  if (icon) {
    const size = 88;
    const tile = await sharp(icon, { limitInputPixels: 64_000_000 })
      .resize(size, size, { fit: 'contain', background: { r: 0, g: 0, b: 0, alpha: 0 } })
      .png()
      .toBuffer();
    const plate = await sharp({ create: { width: size + 16, height: size + 16, channels: 4, background: { r: 255, g: 255, b: 255, alpha: 1 } } })
      .composite([{ input: tile, left: 8, top: 8 }])
      .png()
      .toBuffer();
    img = sharp(await img.png().toBuffer()).composite([{ input: plate, left: Math.round((W - size - 16) / 2), top: 28 }]);
  }
  return img.webp({ quality: 82 }).toBuffer();
}

/** The first of `urls` that downloads (through the guard) as an image sharp can read. */
async function firstImage(urls: string[], policy: OutboundPolicy, minSide: number): Promise<Buffer | null> {
  const sharp = await loadSharp();
  for (const u of urls.slice(0, 4)) {
    try {
      const res = await safeFetch(u, policy, { timeoutMs: 8_000, maxBytes: 8 * 1024 * 1024, headers: { accept: 'image/*' } });
      if (res.status >= 400 || res.truncated) continue;
      const meta = await sharp(res.body, { limitInputPixels: 64_000_000 }).metadata();
      if ((meta.width ?? 0) >= minSide && (meta.height ?? 0) >= minSide) return res.body;
    } catch {
      /* try the next one */
    }
  }
  return null;
}

export interface WebsiteThumbnail {
  webp: Buffer;
  title: string | null;
  source: 'picture' | 'icon' | 'card';
  error: string | null;
}

/**
 * A website's thumbnail, made from what the page says about itself, fetched through the
 * outbound guard (DESIGN.md section 9): its preview picture (og:image) cropped to the
 * card, else a card with its icon, title and address, else (the page cannot be reached
 * from the server) a card with the address and why.
 */
export async function websiteThumbnail(url: string, policy: OutboundPolicy): Promise<WebsiteThumbnail> {
  const sharp = await loadSharp();
  let host = url;
  try {
    host = new URL(url).host;
  } catch {
    /* keep the text */
  }
  let facts: PageFacts;
  try {
    const res = await safeFetch(url, policy, { timeoutMs: 10_000, maxBytes: 1024 * 1024, headers: { accept: 'text/html,application/xhtml+xml' } });
    if (res.status >= 400) throw new Error(`the site answered ${res.status}`);
    facts = readPageFacts(res.body.toString('utf8'), res.url);
  } catch (err) {
    const why = err instanceof OutboundError ? err.message : (err as Error).message;
    return { webp: await card(host, null, null, 'The server could not open this page'), title: null, source: 'card', error: why };
  }
  const picture = await firstImage(facts.pictures, policy, 120);
  if (picture) {
    const webp = await sharp(picture, { limitInputPixels: 64_000_000 }).resize(W, H, { fit: 'cover', position: 'attention' }).webp({ quality: 82 }).toBuffer();
    return { webp, title: facts.title, source: 'picture', error: null };
  }
  const icon = await firstImage(facts.icons, policy, 16);
  return { webp: await card(host, facts.title, icon, null), title: facts.title, source: icon ? 'icon' : 'card', error: null };
}

/**
 * The job: makes the thumbnail and records it as the asset's `thumbnail` variant (the old
 * one goes), with the page's title in the asset's metadata. The asset stays `ready`
 * throughout: a website plays whether or not its thumbnail could be made.
 */
/** What the thumbnail job needs of the media service (service.ts runs it; a narrow type keeps the import one way). */
export interface WebsiteThumbnailHost {
  deps: AppDeps;
  store: MediaStore;
  removeOrphans(candidates: readonly (string | null)[]): Promise<void>;
}

export async function runWebsiteThumbnail(media: WebsiteThumbnailHost, assetId: string, job: JobContext): Promise<void> {
  const db = media.deps.db;
  const asset = await getAsset(db, assetId);
  if (asset?.kind !== 'website' || !asset.website) return;
  const { url } = JSON.parse(asset.website) as WebsiteSettings;
  const made = await websiteThumbnail(url, await fetchPolicy(media.deps));
  job.progress(0.8);
  const work = await media.store.workDir();
  try {
    const file = path.join(work, 'thumbnail.webp');
    await fs.writeFile(file, made.webp);
    const hashed = await hashFile(file);
    const old = await listVariants(db, assetId);
    await media.store.locks.withAll([hashed.sha256], async () => {
      await media.store.adopt(file, hashed);
      await db.transaction().execute(async (trx) => {
        const row = await websiteAndMetadata(trx, assetId);
        // Deleted, or its address changed meanwhile (that change queued its own job).
        if (!row || row.website !== asset.website) return;
        const now = nowIso();
        await insertMediaFile(trx, { sha256: hashed.sha256, size_bytes: hashed.size, content_type: 'image/webp', created_at: now });
        await deleteVariantsOf(trx, assetId, 'thumbnail');
        const thumbnail = { purpose: 'thumbnail' as const, contentType: 'image/webp', width: W, height: H, page: null, ...hashed };
        await insertVariant(trx, assetId, thumbnail, now);
        let metadata: Record<string, unknown> = {};
        try {
          metadata = JSON.parse(row.metadata) as Record<string, unknown>;
        } catch {
          metadata = {};
        }
        const facts = { pageTitle: made.title, thumbnailSource: made.source, thumbnailError: made.error, thumbnailAt: now };
        await setAssetMetadata(trx, assetId, JSON.stringify({ ...metadata, ...facts }), now);
      });
    });
    await media.removeOrphans(
      old
        .filter((v) => v.purpose === 'thumbnail')
        .map((v) => v.sha256)
        .concat(hashed.sha256),
    );
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}
