import { Liquid } from 'liquidjs';
import QRCode from 'qrcode';
import sanitizeHtml from 'sanitize-html';
import type { z } from 'zod';
import { BUNDLE_CSP, RUNTIME_JS } from './runtime.js';
import { BASE_CSS, type SETTINGS, TEMPLATES, TYPE_CSS, type WidgetType } from './types.js';

/**
 * The widget compiler (issue 19, docs/widgets.md): one path for every type. A widget's
 * Liquid template (a built-in type's, or a custom one) is rendered with its settings and
 * data by liquidjs in a closed room: no file system (`include`/`render` of any name fail),
 * strict filters, own properties only, and parse/render/memory limits so a hostile template
 * cannot hold the server. A custom template's HTML is then sanitised, and the result wrapped
 * in the bundle document (CSP, context, runtime).
 */

export interface TemplateError {
  message: string;
  line: number | null;
  column: number | null;
}

export interface WidgetData {
  columns: { name: string; type: string }[];
  rows: Record<string, unknown>[];
  sourceName: string | null;
}

export interface CompileInput {
  type: WidgetType;
  settings: Record<string, unknown>;
  template: string | null;
  data: WidgetData | null;
  now: Date;
}

export type CompileResult = { ok: true; html: string } | { ok: false; errors: TemplateError[] };

/** Template text at most this long (characters). */
export const MAX_TEMPLATE_CHARS = 100_000;
/** A bundle at most this large (bytes). */
export const MAX_BUNDLE_BYTES = 5 * 1024 * 1024;
/** Render time a template may take (ms), and the memory units (characters, array items) it may allocate. */
export const RENDER_LIMIT_MS = 500;
export const MEMORY_LIMIT = 4_000_000;

const liquid = new Liquid({
  templates: {},
  relativeReference: false,
  strictFilters: true,
  ownPropertyOnly: true,
  outputEscape: 'escape',
  catchAllErrors: true,
  parseLimit: MAX_TEMPLATE_CHARS * 2,
  renderLimit: RENDER_LIMIT_MS,
  memoryLimit: MEMORY_LIMIT,
  cache: false,
});
liquid.registerFilter('money', (v: unknown, currency?: unknown, decimals?: unknown) =>
  formatCell(v, {
    type: 'money',
    currency: typeof currency === 'string' ? currency : undefined,
    decimals: typeof decimals === 'number' ? decimals : undefined,
  }),
);
liquid.registerFilter('number', (v: unknown, decimals?: unknown) =>
  formatCell(v, { type: 'number', decimals: typeof decimals === 'number' ? decimals : undefined }),
);

/** A template's parse errors with their positions (empty: it parses). */
export function parseErrors(template: string): TemplateError[] {
  if (template.length > MAX_TEMPLATE_CHARS) return [{ message: `The template is longer than ${MAX_TEMPLATE_CHARS} characters`, line: null, column: null }];
  try {
    liquid.parse(template);
    return [];
  } catch (err) {
    return errorsOf(err);
  }
}

function errorsOf(err: unknown): TemplateError[] {
  // LiquidErrors nest (a loop inside a loop): the innermost ones say what happened.
  const flat = (e: unknown, depth = 0): unknown[] => {
    const inner = (e as { errors?: unknown[] })?.errors;
    return inner?.length && depth < 10 ? inner.flatMap((i) => flat(i, depth + 1)) : [e];
  };
  const list = flat(err);
  return list.slice(0, 20).map((e) => {
    const any = e as { message?: string; token?: { getPosition?: () => [number, number] } };
    const pos = any.token?.getPosition?.();
    const message = String(any.message ?? e)
      .replace(/, line:\d+, col:\d+$/, '')
      .slice(0, 500);
    return { message, line: pos?.[0] ?? null, column: pos?.[1] ?? null };
  });
}

/** Compiles a widget to its bundle document. Never throws for user input. */
export async function compileWidget(input: CompileInput): Promise<CompileResult> {
  const settings = input.settings;
  const template = input.type === 'custom' ? (input.template ?? '') : TEMPLATES[input.type];
  const errors = parseErrors(template);
  if (errors.length) return { ok: false, errors };
  const rows = input.data?.rows ?? [];
  const scope: Record<string, unknown> = {
    settings,
    rows,
    columns: input.data?.columns ?? [],
    now: input.now.toISOString(),
    source: input.data?.sourceName ?? null,
  };
  try {
    Object.assign(scope, await prepare(input.type, settings, input.data));
  } catch (err) {
    return { ok: false, errors: [{ message: err instanceof Error ? err.message : String(err), line: null, column: null }] };
  }
  let body: string;
  try {
    body = await liquid.parseAndRender(template, scope);
  } catch (err) {
    return { ok: false, errors: errorsOf(err) };
  }
  if (input.type === 'custom') body = sanitizeWidgetHtml(body);
  const html = bundleDocument(input.type, settings, body);
  if (Buffer.byteLength(html) > MAX_BUNDLE_BYTES)
    return { ok: false, errors: [{ message: `The bundle would be larger than ${MAX_BUNDLE_BYTES} bytes; show fewer rows`, line: null, column: null }] };
  return { ok: true, html };
}

/** The bundle document (docs/widgets.md "Bundle format"). */
export function bundleDocument(type: WidgetType, settings: Record<string, unknown>, body: string): string {
  const lang = typeof settings.lang === 'string' ? settings.lang : 'en';
  const rules: string[] = [];
  if (settings.background) rules.push(`background:${settings.background}`);
  if (settings.color) rules.push(`color:${settings.color}`);
  if (settings.fontFamily) rules.push(`font-family:${settings.fontFamily}`);
  // --pl-size: the built-in types' CSS uses it over its automatic, zone-relative size.
  if (settings.fontSizePx) rules.push(`font-size:${settings.fontSizePx}px;--pl-size:${settings.fontSizePx}px`);
  const own = type === 'custom' && typeof settings.css === 'string' ? cleanCss(settings.css) : '';
  const css = `${BASE_CSS}${rules.length ? `body{${rules.join(';')}}` : ''}${TYPE_CSS[type]}${own}`;
  // The body's class names the type as pl-type-<type>: plain pl-<type> would match the runtime's
  // own selectors (.pl-clock, .pl-ticker, .pl-table...) and the runtime would drive the body too.
  return (
    `<!doctype html><html lang="${lang}"><head><meta charset="utf-8">` +
    `<meta http-equiv="Content-Security-Policy" content="${BUNDLE_CSP}">` +
    `<script type="application/json" id="placard-context">{}</script>` +
    `<meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<style>${css}</style></head><body class="pl pl-type-${type}">${body}<script>${RUNTIME_JS}</script></body></html>`
  );
}

const MEDIA_REF = /^placard-media:[0-9a-fA-F-]{36}$/;

/** A stylesheet that cannot leave its <style>, import, or reach a URL other than a placard-media one. */
export function cleanCss(css: string): string {
  return css
    .replace(/</g, '\\3c ')
    .replace(/@import[^;]*;?/gi, '')
    .replace(/url\(\s*(['"]?)(.*?)\1\s*\)/gi, (_m, _q, u: string) => (MEDIA_REF.test(u.trim()) ? `url("${u.trim()}")` : 'none'))
    .replace(/(?:url|image-set|image|src)\s*\(/gi, (m) => (/^url/i.test(m) ? m : 'none('));
}

const SANITIZE: sanitizeHtml.IOptions = {
  allowedTags: [
    ...sanitizeHtml.defaults.allowedTags.filter((t) => !['a'].includes(t)),
    'img',
    'span',
    'figure',
    'figcaption',
    'time',
    'section',
    'header',
    'footer',
    'article',
    'main',
    'small',
    'sub',
    'sup',
    'mark',
    'u',
    's',
  ],
  allowedAttributes: {
    '*': ['class', 'style', 'title', 'lang', 'dir', 'data-*', 'aria-*', 'role'],
    img: ['src', 'alt', 'width', 'height', 'loading'],
    td: ['colspan', 'rowspan'],
    th: ['colspan', 'rowspan', 'scope'],
    time: ['datetime'],
    ol: ['start', 'reversed'],
  },
  allowedSchemes: [],
  allowedSchemesByTag: { img: ['placard-media'] },
  allowedSchemesAppliedToAttributes: ['src', 'href', 'cite', 'action', 'poster', 'background'],
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
  nonTextTags: ['script', 'style', 'textarea', 'option', 'noscript', 'iframe', 'object', 'embed', 'template', 'title'],
  transformTags: {
    '*': (tagName, attribs) => {
      const out = { ...attribs };
      if (out.style !== undefined) out.style = cleanCss(out.style).replace(/[{}]/g, '');
      if (tagName === 'img' && out.src !== undefined && !MEDIA_REF.test(out.src)) delete out.src;
      return { tagName, attribs: out };
    },
  },
};

/** A custom template's rendered HTML, without scripts, frames, forms, handlers or URLs other than placard-media ones. */
export function sanitizeWidgetHtml(html: string): string {
  return sanitizeHtml(html, SANITIZE);
}

// ---- what the built-in types add to the template's data (prepare: exported for the benchmark) ----

type Format = { type?: 'text' | 'number' | 'money'; decimals?: number; currency?: string; grouping?: boolean; symbolBefore?: boolean };

const SYMBOLS: Record<string, string> = {
  EUR: '€',
  USD: '$',
  GBP: '£',
  JPY: '¥',
  CNY: '¥',
  INR: '₹',
  KRW: '₩',
  RUB: '₽',
  TRY: '₺',
  PLN: 'zł',
  ILS: '₪',
  UAH: '₴',
};

function toNumber(v: unknown): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v.trim()))) return Number(v.trim());
  return null;
}

/** A cell as text: numbers with fixed decimals (and narrow-space grouping), money with its currency's symbol ("15.00 €"). */
export function formatCell(v: unknown, format: Format | undefined): string {
  const type = format?.type ?? 'text';
  if (v === null || v === undefined) return '';
  if (type === 'text') return typeof v === 'object' ? JSON.stringify(v) : String(v);
  const n = toNumber(v);
  if (n === null) return String(v);
  const decimals = format?.decimals ?? (type === 'money' ? 2 : undefined);
  let text = decimals === undefined ? String(n) : n.toFixed(decimals);
  if (format?.grouping) {
    const [int, frac] = text.split('.');
    text = int!.replace(/\B(?=(\d{3})+(?!\d))/g, '\u202f') + (frac !== undefined ? `.${frac}` : '');
  }
  if (type === 'money') {
    const symbol = format?.currency ? (SYMBOLS[format.currency] ?? format.currency) : '';
    if (!symbol) return text;
    return format?.symbolBefore ? `${symbol}${text}` : `${text} ${symbol}`;
  }
  return text;
}

export async function prepare(type: WidgetType, settings: Record<string, unknown>, data: WidgetData | null): Promise<Record<string, unknown>> {
  if (type === 'qr') {
    const s = settings as z.output<(typeof SETTINGS)['qr']>;
    return { qrSvg: await QRCode.toString(s.value, { type: 'svg', margin: 1, color: { dark: s.dark, light: s.light } }) };
  }
  if (type === 'table') return { table: tableOf(settings as z.output<(typeof SETTINGS)['table']>, data) };
  if (type === 'agenda' && data) {
    const s = settings as z.output<(typeof SETTINGS)['agenda']>;
    const key = (r: Record<string, unknown>) => String(r[s.fields.start] ?? '');
    return { rows: [...data.rows].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0)) };
  }
  return {};
}

type Line = { group: string } | { group: null; cells: { text: string; kind: string }[] };

function tableOf(s: z.output<(typeof SETTINGS)['table']>, data: WidgetData | null) {
  const cols = s.columns.length ? s.columns : (data?.columns ?? []).map((c) => ({ name: c.name, heading: undefined, format: undefined }));
  const headings = cols.map((c) => ({ text: c.heading ?? c.name, kind: c.format?.type ?? 'text' }));
  const rows = data?.rows ?? [];
  const groups = new Map<string, Record<string, unknown>[]>();
  for (const row of rows) {
    const g = s.groupBy ? formatCell(row[s.groupBy], undefined) : '';
    if (!groups.has(g)) groups.set(g, []);
    groups.get(g)!.push(row);
  }
  const pages: Line[][] = [];
  let page: Line[] = [];
  let count = 0;
  for (const [group, members] of groups) {
    if (s.groupBy) page.push({ group: group || '—' });
    for (const row of members) {
      if (count === s.rowsPerPage) {
        pages.push(page);
        page = s.groupBy ? [{ group: group || '—' }] : [];
        count = 0;
      }
      page.push({ group: null, cells: cols.map((c) => ({ text: formatCell(row[c.name], c.format), kind: c.format?.type ?? 'text' })) });
      count++;
    }
  }
  if (page.length || pages.length === 0) pages.push(page);
  // The lines sharing the zone's height (the CSS's --pl-lines): the tallest page, the title, the heading row.
  const lines = Math.max(1, ...pages.map((p) => p.length)) + (s.title ? 1.4 : 0) + (s.headings ? 1 : 0);
  return { headings, pages, lines: Number(lines.toFixed(2)), cols: Math.max(2, cols.length) };
}
