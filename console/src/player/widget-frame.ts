/**
 * Widgets in the player, pure logic (docs/player.md "Widgets"; the bundle format is
 * docs/widgets.md's): which bundle a playlist item or zone shows, the context the player
 * writes into the bundle's `#placard-context` script, the `placard-media:<assetId>`
 * references replaced by data: URLs of cached variants, the policy the frame is held to,
 * and whether a frame on screen stays or is replaced. No DOM here (unit-tested in Node).
 */
import type { MediaEntry, PlayerManifest, PlaylistItem, WidgetEntry, Zone } from './manifest.js';

/** What the runtime inside the bundle reads (#placard-context). */
export interface WidgetContext {
  timeZone: string;
  width: number;
  height: number;
  locale: string;
}

/**
 * The frame's policy, also set as the iframe's `csp` attribute (CSP Embedded Enforcement):
 * no network at all (images, media and fonts only as data: or blob:), inline styles, and
 * scripts only by the hashes the bundle's own policy names (its built-in runtime). Built
 * here rather than copied, so a bundle can never widen what its frame may do.
 */
export const FRAME_POLICY_BASE = [
  "default-src 'none'",
  'img-src data: blob:',
  'media-src data: blob:',
  'font-src data:',
  "style-src 'unsafe-inline'",
  "base-uri 'none'",
  "form-action 'none'",
];

/** The `sandbox` the frame gets: scripts (the runtime), never allow-same-origin (an opaque origin: no cookies, storage or credential). */
export const FRAME_SANDBOX = 'allow-scripts';

/** Stand-in for an image the manifest does not list or the cache does not hold: an empty data: URL (never a remote address). */
export const MISSING_MEDIA = 'data:,';

const CONTEXT_SCRIPT = /(<script\b[^>]*\bid\s*=\s*["']?placard-context["']?[^>]*>)([\s\S]*?)(<\/script\s*>)/i;
const MEDIA_REF = /placard-media:([A-Za-z0-9_-]+)/g;
const CSP_META = /<meta\b[^>]*http-equiv\s*=\s*["']?content-security-policy["']?[^>]*>/i;

/** The bundle the manifest lists for a widget now (by widgetId: a new bundle replaces the old under the same widget). */
export function widgetEntryFor(manifest: Pick<PlayerManifest, 'widgets'>, widgetId: string | null, bundleId?: string | null): WidgetEntry | null {
  if (!widgetId) return null;
  const all = manifest.widgets.filter((w) => w.widgetId === widgetId);
  return all.find((w) => w.bundleId === bundleId) ?? all[0] ?? null;
}

/** The bundle a playlist item or a zone shows (null: not a widget, or no bundle listed). */
export function widgetOf(manifest: Pick<PlayerManifest, 'widgets'>, target: Pick<PlaylistItem, 'widgetId'> | Pick<Zone, 'widget'>): WidgetEntry | null {
  if ('widget' in target) return widgetEntryFor(manifest, target.widget?.widgetId ?? null);
  return widgetEntryFor(manifest, target.widgetId);
}

/** The context's JSON, safe inside a <script> element (`<` escaped, so no `</script>` can close it early). */
export function contextJson(ctx: WidgetContext): string {
  const body = {
    timeZone: ctx.timeZone,
    width: Math.max(0, Math.round(ctx.width)),
    height: Math.max(0, Math.round(ctx.height)),
    locale: ctx.locale,
  };
  return JSON.stringify(body)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** Writes the context into the bundle's #placard-context script (the first one; a bundle without one is left as it is). */
export function injectContext(html: string, ctx: WidgetContext): string {
  const json = contextJson(ctx);
  // A function replacer: `$` in the JSON is not a replacement pattern.
  return html.replace(CONTEXT_SCRIPT, (_m, open: string, _body: string, close: string) => `${open}${json}${close}`);
}

/** The asset ids a bundle refers to as `placard-media:<assetId>`, each once, in order of appearance. */
export function mediaRefs(html: string): string[] {
  return [...new Set([...html.matchAll(MEDIA_REF)].map((m) => m[1]!))];
}

/** The media variant the manifest names for each of a bundle's images (only those listed in `media`). */
export function widgetImages(manifest: Pick<PlayerManifest, 'media'>, entry: Pick<WidgetEntry, 'images'>): Map<string, MediaEntry> {
  const out = new Map<string, MediaEntry>();
  for (const image of entry.images) {
    const media = manifest.media.find((m) => m.variantId === image.variantId && m.assetId === image.assetId);
    if (media && !out.has(image.assetId)) out.set(image.assetId, media);
  }
  return out;
}

/**
 * Every `placard-media:<assetId>` replaced by the data: URL given for that asset, or by an
 * empty data: URL when none is (not listed, not cached): the frame never sees an address
 * it could fetch.
 */
export function substituteMedia(html: string, dataUrls: ReadonlyMap<string, string>): string {
  return html.replace(MEDIA_REF, (_m, assetId: string) => dataUrls.get(assetId) ?? MISSING_MEDIA);
}

/** The script hashes (`'sha256-…'`, `'sha384-…'`, `'sha512-…'`) the bundle's own policy allows. */
export function scriptHashes(html: string): string[] {
  const meta = CSP_META.exec(html)?.[0];
  if (!meta) return [];
  const content = /\bcontent\s*=\s*("([^"]*)"|'([^']*)')/i.exec(meta);
  const policy = (content?.[2] ?? content?.[3] ?? '').replace(/&#39;|&apos;/g, "'").replace(/&quot;/g, '"');
  const scriptSrc = policy
    .split(';')
    .map((d) => d.trim().split(/\s+/))
    .find((d) => d[0]?.toLowerCase() === 'script-src');
  return (scriptSrc ?? []).slice(1).filter((s) => /^'sha(256|384|512)-[A-Za-z0-9+/_-]+={0,2}'$/.test(s));
}

/** The frame's policy: FRAME_POLICY_BASE with the bundle's script hashes (or no script at all). */
export function framePolicy(html: string): string {
  const hashes = scriptHashes(html);
  return [...FRAME_POLICY_BASE, `script-src ${hashes.length > 0 ? hashes.join(' ') : "'none'"}`].join('; ');
}

/** The srcdoc a frame shows: the bundle with its context written in and its images as data: URLs. */
export function widgetDocument(html: string, ctx: WidgetContext, dataUrls: ReadonlyMap<string, string>): string {
  // Images first: the context is written verbatim after (nothing in it is read as a reference).
  return injectContext(substituteMedia(html, dataUrls), ctx);
}

/**
 * What a widget zone does with a new manifest: `keep` the frame on screen (the same bundle:
 * a ticker or clock keeps running, no flash), `swap` to a new one built hidden (another
 * bundle), `build` the first one, or `wait` (nothing listed: what is on stays).
 */
export function frameDecision(shownBundleId: string | null, wanted: Pick<WidgetEntry, 'bundleId'> | null): 'keep' | 'swap' | 'build' | 'wait' {
  if (!wanted) return 'wait';
  if (shownBundleId === null) return 'build';
  return shownBundleId === wanted.bundleId ? 'keep' : 'swap';
}
