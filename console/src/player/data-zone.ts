/**
 * A layout zone that shows a data source (docs/player.md, "Data zones"): the rows of the
 * output the manifest names, as a table sized to the zone, read from the cache the runtime
 * fills (so it shows offline too). Rows that do not fit are paged every PAGE_MS. A new
 * output (the data changed) replaces the table only once its document is cached and read:
 * the old table stays on until then, never an empty zone. Image cells whose address the
 * manifest lists as media show that cached picture at the row's height; the others, text.
 */
import {
  CellFormatter,
  cellAlign,
  cellImage,
  CELL_PADDING_EM,
  columnWidthsEm,
  type DataDocument,
  estimateEm,
  imageIndex,
  type Measure,
  PAGE_MS,
  outputFor,
  type PagePlan,
  pageSlice,
  planPages,
  readDataDocument,
  tableFontPx,
  thumbWidthEm,
} from './data-table.js';
import type { DataEntry, MediaEntry, PlayerManifest, Zone } from './manifest.js';
import type { MediaCache } from './media-cache.js';

const RETRY_MS = 2_000;
/** While a picture the manifest lists is not cached (its download failed), look again this often. */
const IMAGE_RETRY_MS = 15_000;
const PAGE_FADE_MS = 300;
const EMPTY_TEXT = 'No rows';
/** The table's own left and right padding (player.css .pl-data), in em. */
const PAD_X_EM = 0.6;

export interface DataZoneContext {
  cache: Pick<MediaCache, 'blob' | 'objectUrl' | 'isReady'>;
  now(): number;
  log(message: string): void;
}

/** A cell's picture: the cached variant's blob URL and its width at the row's height. */
interface Picture {
  src: string;
  widthEm: number;
}

/** What a table shows of an output: the output and the pictures its image cells had (by address). */
const imagesKey = (entry: DataEntry | null, manifest: PlayerManifest): string =>
  entry
    ? [...imageIndex(manifest, entry)]
        .map(([url, m]) => `${url}\n${m.variantId}`)
        .sort()
        .join('\n')
    : '';

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className = ''): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (className) e.className = className;
  return e;
}

export class DataZone {
  readonly root: HTMLDivElement;
  private wanted: DataEntry | null;
  private shown: DataEntry | null = null;
  /** imagesKey of the output on screen, to redraw when the same output gets (more) pictures. */
  private shownImages = '';
  /** Pictures listed but not cached when the table was drawn: looked for again every IMAGE_RETRY_MS. */
  private missing: MediaEntry[] = [];
  private imageTimer: ReturnType<typeof setTimeout> | null = null;
  private table: HTMLElement | null = null;
  private stopped = false;
  private attempt = 0;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private pageTimer: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly zone: Zone & { data: NonNullable<Zone['data']> },
    private manifest: PlayerManifest,
    private readonly ctx: DataZoneContext,
    /** The zone's size in canvas pixels (the canvas is scaled as a whole). */
    private readonly box: { width: number; height: number },
  ) {
    this.root = el('div', 'pl-zone pl-data-zone');
    this.wanted = outputFor(manifest, zone.data);
  }

  /** The output on screen (null before the first document is read). */
  get outputId(): string | null {
    return this.shown?.outputId ?? null;
  }

  start(): void {
    void this.load();
  }

  stop(): void {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.imageTimer) clearTimeout(this.imageTimer);
    if (this.pageTimer) clearInterval(this.pageTimer);
  }

  /**
   * A new manifest: its output for this zone comes on once it is cached; until then the old
   * table stays. The same output with other pictures (its images became media) is drawn again.
   */
  update(manifest: PlayerManifest): void {
    const before = imagesKey(this.wanted, this.manifest);
    this.manifest = manifest;
    const next = outputFor(manifest, this.zone.data);
    if (!next || (next.outputId === this.wanted?.outputId && imagesKey(next, manifest) === before)) return;
    this.wanted = next;
    void this.load();
  }

  private async load(): Promise<void> {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.imageTimer) clearTimeout(this.imageTimer);
    const attempt = ++this.attempt;
    const entry = this.wanted;
    const manifest = this.manifest;
    if (this.stopped || !entry || (entry.outputId === this.shown?.outputId && imagesKey(entry, manifest) === this.shownImages && this.missing.length === 0))
      return;
    let doc: DataDocument | null = null;
    try {
      const blob = await this.ctx.cache.blob(entry);
      if (blob) doc = readDataDocument(JSON.parse(await blob.text()));
    } catch (err) {
      this.ctx.log(`Data zone ${this.zone.id}: output ${entry.outputId} could not be read: ${(err as Error).message}`);
    }
    if (this.stopped || attempt !== this.attempt) return;
    if (!doc) {
      // Not cached yet (the runtime is downloading it): try again shortly.
      this.retryTimer = setTimeout(() => void this.load(), RETRY_MS);
      return;
    }
    const { pictures, missing } = await this.pictures(doc, entry, manifest);
    if (this.stopped || attempt !== this.attempt) return;
    this.missing = missing;
    this.shown = entry;
    this.shownImages = imagesKey(entry, manifest);
    this.render(doc, pictures);
    if (this.missing.length > 0) this.watchMissing(attempt);
  }

  /** Each image cell's cached picture (by address), fetched from the cache once per address; notes those not cached. */
  private async pictures(doc: DataDocument, entry: DataEntry, manifest: PlayerManifest): Promise<{ pictures: Map<string, Picture>; missing: MediaEntry[] }> {
    const index = imageIndex(manifest, entry);
    const pictures = new Map<string, Picture>();
    const missing: MediaEntry[] = [];
    if (index.size === 0) return { pictures, missing };
    const wanted = new Map<string, MediaEntry>();
    for (const column of doc.columns)
      for (const row of doc.rows) {
        const media = cellImage(index, row[column.name], column.type);
        if (media) wanted.set(row[column.name] as string, media);
      }
    const found = await Promise.all([...wanted].map(async ([url, media]) => ({ url, media, src: await this.ctx.cache.objectUrl(media).catch(() => null) })));
    for (const { url, media, src } of found) {
      if (src) pictures.set(url, { src, widthEm: thumbWidthEm(media) });
      else missing.push(media);
    }
    return { pictures, missing };
  }

  /** A picture that was not cached: once the runtime's next sync has it, the table is drawn again with it. */
  private watchMissing(attempt: number): void {
    this.imageTimer = setTimeout(() => {
      if (this.stopped || attempt !== this.attempt) return;
      if (this.missing.some((m) => this.ctx.cache.isReady(m))) void this.load();
      else this.watchMissing(attempt);
    }, IMAGE_RETRY_MS);
  }

  /** Builds the table for `doc` beside the old one, measures it, fills its first page, then swaps. */
  private render(doc: DataDocument, pictures: ReadonlyMap<string, Picture>): void {
    const format = new CellFormatter({ timeZone: this.manifest.timeZone, now: this.ctx.now() });
    const columns = doc.columns;
    const cells = doc.rows.map((row) => columns.map((c) => format.format(row[c.name], c.type)));
    // A picture per image cell whose address is cached media (null: the text).
    const pics = doc.rows.map((row) =>
      columns.map((c) => (c.type === 'image' && typeof row[c.name] === 'string' ? (pictures.get(row[c.name] as string) ?? null) : null)),
    );
    const rows = cells.map((texts, i) => ({ texts, pics: pics[i]! }));
    const wrap = el('div', 'pl-data');
    wrap.style.visibility = 'hidden';
    wrap.dataset.outputId = this.shown?.outputId ?? '';
    this.root.append(wrap);
    const measure = measureIn(wrap);
    // No rows: no header either, only a quiet line at the zone's own size.
    const empty = cells.length === 0;
    const widths = empty
      ? [1.3 * measure(EMPTY_TEXT, false) + CELL_PADDING_EM]
      : columnWidthsEm(
          columns.map((c) => c.name),
          cells,
          measure,
          undefined,
          (r, c) => pics[r]?.[c]?.widthEm ?? null,
        );
    const fontPx = tableFontPx(this.box, widths, 2 * PAD_X_EM);
    const totalEm = widths.reduce((a, b) => a + b, 0) || 1;
    wrap.style.fontSize = `${fontPx.toFixed(1)}px`;
    const table = el('table', 'pl-data-table');
    table.dataset.testid = 'data-table';
    const colgroup = el('colgroup');
    if (!empty) for (const w of widths) colgroup.append(Object.assign(el('col'), { style: `width: ${((100 * w) / totalEm).toFixed(3)}%` }));
    const headRow = el('tr');
    columns.forEach((c) => {
      const th = el('th', `pl-align-${cellAlign(c.type)}`);
      th.scope = 'col';
      th.textContent = c.name;
      headRow.append(th);
    });
    const thead = el('thead');
    thead.append(headRow);
    const tbody = el('tbody');
    const footer = el('div', 'pl-data-page');
    footer.dataset.testid = 'data-page';
    table.append(colgroup, ...(empty ? [] : [thead]), tbody);
    wrap.append(table, footer);

    // Measure a header and one row at this size (cells never wrap: every row is as high).
    const fillRows = (slice: typeof rows) => {
      tbody.replaceChildren(
        ...slice.map((r) => {
          const tr = el('tr');
          r.texts.forEach((text, i) => {
            const td = el('td', `pl-align-${cellAlign(columns[i]!.type)}`);
            const pic = r.pics[i];
            if (pic) {
              // The cached picture, as high as a line of text (player.css .pl-data-img): the row keeps its height.
              const img = el('img', 'pl-data-img');
              img.src = pic.src;
              img.alt = '';
              td.append(img);
            } else td.textContent = text;
            // A cell cut short by the ellipsis still says it all to whoever can hover or read the DOM.
            td.title = text;
            tr.append(td);
          });
          return tr;
        }),
      );
    };
    if (empty) {
      const tr = el('tr');
      const td = el('td', 'pl-data-empty');
      td.colSpan = Math.max(1, columns.length);
      td.textContent = EMPTY_TEXT;
      tr.append(td);
      tbody.replaceChildren(tr);
    } else fillRows([rows[0]!]);
    footer.textContent = '1 / 1';
    const style = getComputedStyle(wrap);
    const padding = parseFloat(style.paddingTop) + parseFloat(style.paddingBottom);
    // Fractional heights, read back in canvas pixels (the layout canvas is scaled as a whole).
    const rect = wrap.getBoundingClientRect();
    const scale = wrap.offsetHeight > 0 && rect.height > 0 ? rect.height / wrap.offsetHeight : 1;
    const height = (node: HTMLElement) => node.getBoundingClientRect().height / scale;
    const plan: PagePlan = planPages(cells.length, this.box.height - padding - height(thead), height(tbody), height(footer));
    let page = 0;
    const showPage = () => {
      if (rows.length > 0) fillRows(pageSlice(rows, plan, page));
      footer.textContent = plan.pages > 1 ? `${(page % plan.pages) + 1} / ${plan.pages}` : '';
      footer.hidden = plan.pages <= 1;
    };
    showPage();
    wrap.dataset.pages = String(plan.pages);
    wrap.dataset.rowsPerPage = String(plan.perPage);

    // The new table comes on in one go; the old one leaves with it.
    const old = this.table;
    this.table = wrap;
    wrap.style.visibility = '';
    old?.remove();
    if (this.pageTimer) clearInterval(this.pageTimer);
    this.pageTimer = null;
    if (plan.pages > 1) {
      this.pageTimer = setInterval(() => {
        if (this.stopped || this.table !== wrap) return;
        tbody.style.opacity = '0';
        setTimeout(() => {
          page = (page + 1) % plan.pages;
          showPage();
          tbody.style.opacity = '';
        }, PAGE_FADE_MS);
      }, PAGE_MS);
    }
  }
}

/**
 * Text widths in the table's own face (canvas measureText at 100 px), in em: headers as
 * player.css draws them (upper case, 0.62 em, 600 weight, 0.08 em letter spacing) and cells,
 * each with 4 % to spare (sub-pixel column widths would otherwise cut a text that just fits).
 */
function measureIn(wrap: HTMLElement): Measure {
  const g = document.createElement('canvas').getContext('2d');
  if (!g) return estimateEm;
  const family = getComputedStyle(wrap).fontFamily;
  return (text, header) => {
    if (header) {
      g.font = `600 100px ${family}`;
      return 1.04 * 0.62 * (g.measureText(text.toUpperCase()).width / 100 + 0.08 * [...text].length);
    }
    g.font = `400 100px ${family}`;
    return 1.04 * (g.measureText(text).width / 100);
  };
}
