/**
 * A data zone's pure logic (docs/player.md, "Data zones"): reading a data output document
 * (`{sourceId, viewKey, revision, generatedAt, columns, rows}`), formatting its cells for a
 * screen (numbers in the page's locale, booleans as a check mark, dates and date-times in
 * the manifest's time zone, rich text as plain text), sizing the type to the zone, and
 * paging rows that do not fit, finding the cached picture of an image cell. No DOM here: data-zone.ts draws what this decides.
 */

import type { DataEntry, MediaEntry, PlayerManifest, Zone } from './manifest.js';

export const COLUMN_TYPES = ['text', 'number', 'boolean', 'date', 'datetime', 'url', 'image', 'richtext'] as const;
export type ColumnType = (typeof COLUMN_TYPES)[number];

export interface DataColumn {
  name: string;
  type: ColumnType;
}

export type DataRow = Record<string, unknown>;

export interface DataDocument {
  sourceId: string | null;
  viewKey: string | null;
  revision: number | null;
  generatedAt: string | null;
  columns: DataColumn[];
  rows: DataRow[];
}

/** The output a zone shows in `manifest`: the one it names, else the one of its source and view (a newer manifest names a newer output). */
export function outputFor(manifest: Pick<PlayerManifest, 'data'>, data: NonNullable<Zone['data']>): DataEntry | null {
  return (
    manifest.data.find((d) => d.outputId === data.outputId) ?? manifest.data.find((d) => d.sourceId === data.sourceId && d.viewKey === data.viewKey) ?? null
  );
}

/**
 * The pictures an output's image cells can show: each address the manifest's `data[].images`
 * lists whose variant is in `media` (and is an image), by address. A cell whose address is
 * not here shows its text.
 */
export function imageIndex(manifest: Pick<PlayerManifest, 'media'>, entry: Pick<DataEntry, 'images'>): Map<string, MediaEntry> {
  const index = new Map<string, MediaEntry>();
  for (const image of entry.images) {
    if (index.has(image.url)) continue;
    const media = manifest.media.find((m) => m.variantId === image.variantId && m.assetId === image.assetId);
    if (media?.contentType.startsWith('image/')) index.set(image.url, media);
  }
  return index;
}

/** The picture a cell shows instead of its text: only an image column's value, by its exact address; else null. */
export function cellImage(index: ReadonlyMap<string, MediaEntry>, value: unknown, type: ColumnType): MediaEntry | null {
  return type === 'image' && typeof value === 'string' ? (index.get(value) ?? null) : null;
}

/** A row's line height in em (player.css: .pl-data line-height): a picture in a cell is this high, so rows keep their height. */
export const THUMB_EM = 1.3;

/** How wide a picture is at the row's height, in em (4:3 when its size is unknown), at most MAX_COLUMN_EM. */
export function thumbWidthEm(media: Pick<MediaEntry, 'width' | 'height'>): number {
  const aspect = media.width && media.height && media.width > 0 && media.height > 0 ? media.width / media.height : 4 / 3;
  return Math.min(MAX_COLUMN_EM, THUMB_EM * aspect);
}

/** A page of a long list stays this long before the next one comes on. */
export const PAGE_MS = 8_000;

const obj = (v: unknown): Record<string, unknown> | null => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null);
const str = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);

/**
 * Reads a data output document; tolerant like the manifest reader: a column of an unknown
 * type is shown as text, a row that is not an object is dropped, and a document without
 * columns takes them from its rows' keys. Throws only when it is not an object.
 */
export function readDataDocument(raw: unknown): DataDocument {
  const o = obj(raw);
  if (!o) throw new Error('The data document is not an object');
  const rows = (Array.isArray(o.rows) ? o.rows : []).map(obj).filter((r): r is DataRow => r !== null);
  const columns: DataColumn[] = [];
  const seen = new Set<string>();
  for (const c of Array.isArray(o.columns) ? o.columns : []) {
    const col = obj(c);
    const name = typeof col?.name === 'string' ? col.name : null;
    if (name === null || seen.has(name)) continue;
    seen.add(name);
    const type = (COLUMN_TYPES as readonly string[]).includes(col?.type as string) ? (col?.type as ColumnType) : 'text';
    columns.push({ name, type });
  }
  if (columns.length === 0)
    for (const row of rows)
      for (const name of Object.keys(row))
        if (!seen.has(name)) {
          seen.add(name);
          columns.push({ name, type: 'text' });
        }
  return {
    sourceId: str(o.sourceId),
    viewKey: str(o.viewKey),
    revision: typeof o.revision === 'number' ? o.revision : null,
    generatedAt: str(o.generatedAt),
    columns,
    rows,
  };
}

/** How a column's cells line up: numbers on the right (digits under digits), check marks centred. */
export function cellAlign(type: ColumnType): 'start' | 'end' | 'center' {
  return type === 'number' ? 'end' : type === 'boolean' ? 'center' : 'start';
}

const CALENDAR_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
/** A date and time without an offset: a wall-clock time, shown as written. */
const WALL_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?$/;

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** Rich text as the plain text a table cell shows: tags dropped, entities read, spaces folded. */
export function plainText(html: string): string {
  return html
    .replace(/<(script|style)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<br\s*\/?>|<\/(p|div|li|h[1-6])>/gi, ' ')
    .replace(/<[^>]*>/g, '')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, code: string) => {
      if (code[0] === '#') {
        const n = code[1] === 'x' || code[1] === 'X' ? Number.parseInt(code.slice(2), 16) : Number(code.slice(1));
        return Number.isFinite(n) && n > 0 && n <= 0x10ffff ? String.fromCodePoint(n) : whole;
      }
      return ENTITIES[code.toLowerCase()] ?? whole;
    })
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * Formats cells for one table: numbers in the locale (grouping, up to 3 decimals), booleans
 * as ✓ or blank, calendar dates as written (no zone shifts a date), date-times with an offset
 * in `timeZone`, the year only when it is not the current one; links without their scheme.
 * A value that does not fit its column's type is shown as it is.
 */
export class CellFormatter {
  private readonly number: Intl.NumberFormat;
  private readonly formats = new Map<string, Intl.DateTimeFormat>();
  private readonly yearOf: Intl.DateTimeFormat;
  private readonly yearNow: number;
  private readonly yearNowUtc: number;

  constructor(private readonly options: { timeZone: string; now: number; locale?: string }) {
    this.number = new Intl.NumberFormat(options.locale, { maximumFractionDigits: 3 });
    // Western digits whatever the locale, to compare years.
    this.yearOf = new Intl.DateTimeFormat('en-US', { timeZone: options.timeZone, year: 'numeric' });
    this.yearNow = Number(this.yearOf.format(options.now));
    this.yearNowUtc = new Date(options.now).getUTCFullYear();
  }

  private formatter(key: string, make: () => Intl.DateTimeFormat): Intl.DateTimeFormat {
    let f = this.formats.get(key);
    if (!f) {
      f = make();
      this.formats.set(key, f);
    }
    return f;
  }

  /** "Tue 3 Mar" (the year when it is not this one), then ", 14:30" in the locale's short time. */
  private dateTime(ms: number, timeZone: string, withTime: boolean, withYear: boolean): string {
    const { locale } = this.options;
    const date = this.formatter(
      `d|${timeZone}|${withYear}`,
      () => new Intl.DateTimeFormat(locale, { timeZone, weekday: 'short', day: 'numeric', month: 'short', year: withYear ? 'numeric' : undefined }),
    ).format(ms);
    if (!withTime) return date;
    return `${date}, ${this.formatter(`t|${timeZone}`, () => new Intl.DateTimeFormat(locale, { timeZone, timeStyle: 'short' })).format(ms)}`;
  }

  /** A wall-clock date (and time): its parts formatted as they are, in UTC. */
  private wall(parts: RegExpExecArray, withTime: boolean): string {
    const [y, mo, d, h, mi] = [1, 2, 3, 4, 5].map((i) => Number(parts[i] ?? 0)) as [number, number, number, number, number];
    const ms = Date.UTC(y, mo - 1, d, h, mi);
    if (!Number.isFinite(ms) || new Date(ms).getUTCDate() !== d) return parts[0]!;
    return this.dateTime(ms, 'UTC', withTime, y !== this.yearNowUtc);
  }

  private instant(text: string, withTime: boolean): string {
    const ms = Date.parse(text);
    if (!Number.isFinite(ms)) return text;
    return this.dateTime(ms, this.options.timeZone, withTime, Number(this.yearOf.format(ms)) !== this.yearNow);
  }

  format(value: unknown, type: ColumnType): string {
    if (value === null || value === undefined) return '';
    if (typeof value === 'object') return '';
    switch (type) {
      case 'number':
        return typeof value === 'number' && Number.isFinite(value) ? this.number.format(value) : String(value);
      case 'boolean':
        return value === true ? '✓' : value === false ? '' : String(value);
      case 'date':
      case 'datetime': {
        if (typeof value !== 'string') return String(value);
        const text = value.trim();
        const calendar = CALENDAR_DATE.exec(text);
        if (calendar) return this.wall(calendar, false);
        const wall = WALL_TIME.exec(text);
        if (wall) return this.wall(wall, type === 'datetime');
        return this.instant(text, type === 'datetime');
      }
      case 'url':
      case 'image':
        return String(value)
          .replace(/^https?:\/\//i, '')
          .replace(/\/$/, '');
      case 'richtext':
        return plainText(String(value));
      default:
        return String(value);
    }
  }
}

/** How wide a text is, in em of the table's type: a header (upper case, smaller) or a cell. */
export type Measure = (text: string, header: boolean) => number;

/** A column is sized for at most this many em: a longer cell ends in an ellipsis rather than shrinking the whole table. */
export const MAX_COLUMN_EM = 16;
/** A cell's left and right padding together, in em (player.css: .pl-data-table td and th). */
export const CELL_PADDING_EM = 0.9;

/** Without a way to measure (tests, no canvas): an average character of a sans-serif face. */
export const estimateEm: Measure = (text, header) => [...text].length * (header ? 0.52 : 0.6);

/**
 * Each column's width in em at a font size of 1: its widest cell or header (rows sampled up
 * to `sample`), capped at MAX_COLUMN_EM. A cell `fixedEm` gives a width for (a picture) takes
 * that width instead of its text's. The table gives each column its share.
 */
export function columnWidthsEm(
  headers: readonly string[],
  cells: readonly (readonly string[])[],
  measure: Measure = estimateEm,
  sample = 500,
  fixedEm?: (row: number, column: number) => number | null,
): number[] {
  return headers.map((header, i) => {
    let widest = measure('00', false);
    const seen = new Set<string>();
    for (const [r, row] of cells.slice(0, sample).entries()) {
      const fixed = fixedEm?.(r, i) ?? null;
      if (fixed !== null) {
        widest = Math.max(widest, fixed);
        continue;
      }
      const text = row[i] ?? '';
      if (seen.has(text)) continue;
      seen.add(text);
      widest = Math.max(widest, measure(text, false));
    }
    return Math.min(MAX_COLUMN_EM, Math.max(widest, measure(header, true))) + CELL_PADDING_EM;
  });
}

/**
 * The type size for a table in a zone of `box` canvas pixels: a twentieth of the zone's
 * height (about ten rows; at least 18 px in a short zone, at most 72 px), smaller when the
 * columns need more width, but never below a fortieth of the height or 12 px: past that,
 * long cells end in an ellipsis instead.
 */
export function tableFontPx(box: { width: number; height: number }, widthsEm: readonly number[], paddingEm = 1): number {
  const byHeight = Math.min(72, Math.max(box.height / 20, Math.min(box.height / 5, 18)));
  const totalEm = widthsEm.reduce((a, b) => a + b, 0) + paddingEm;
  const byWidth = totalEm > 0 ? box.width / totalEm : byHeight;
  const floor = Math.min(byHeight, Math.max(12, box.height / 40));
  return Math.max(floor, Math.min(byHeight, byWidth));
}

export interface PagePlan {
  /** Rows shown at a time (at least 1). */
  perPage: number;
  pages: number;
}

/**
 * How many rows fit under the header in `available` pixels of rows `rowPx` high, and how
 * many pages the rows make; when they need more than one page, the page line (`footerPx`)
 * takes its space first.
 */
export function planPages(total: number, available: number, rowPx: number, footerPx: number): PagePlan {
  if (total <= 0 || rowPx <= 0) return { perPage: Math.max(1, total), pages: 1 };
  const fit = Math.max(1, Math.floor(available / rowPx));
  if (total <= fit) return { perPage: total, pages: 1 };
  const perPage = Math.max(1, Math.floor((available - footerPx) / rowPx));
  return { perPage, pages: Math.ceil(total / perPage) };
}

/** The rows of page `page` (wrapped into range). */
export function pageSlice<T>(rows: readonly T[], plan: PagePlan, page: number): T[] {
  const p = ((page % plan.pages) + plan.pages) % plan.pages;
  return rows.slice(p * plan.perPage, (p + 1) * plan.perPage);
}
