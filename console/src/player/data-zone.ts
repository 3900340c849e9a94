/**
 * A layout zone that shows a data source (docs/player.md, "Data zones"): the rows of the
 * output the manifest names, as a table sized to the zone, read from the cache the runtime
 * fills (so it shows offline too). Rows that do not fit are paged every PAGE_MS. A new
 * output (the data changed) replaces the table only once its document is cached and read:
 * the old table stays on until then, never an empty zone.
 */
import {
  CellFormatter,
  cellAlign,
  CELL_PADDING_EM,
  columnWidthsEm,
  type DataDocument,
  estimateEm,
  type Measure,
  PAGE_MS,
  outputFor,
  type PagePlan,
  pageSlice,
  planPages,
  readDataDocument,
  tableFontPx,
} from './data-table.js';
import type { DataEntry, PlayerManifest, Zone } from './manifest.js';
import type { MediaCache } from './media-cache.js';

const RETRY_MS = 2_000;
const PAGE_FADE_MS = 300;
const EMPTY_TEXT = 'No rows';
/** The table's own left and right padding (player.css .pl-data), in em. */
const PAD_X_EM = 0.6;

export interface DataZoneContext {
  cache: Pick<MediaCache, 'blob'>;
  now(): number;
  log(message: string): void;
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className = ''): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (className) e.className = className;
  return e;
}

export class DataZone {
  readonly root: HTMLDivElement;
  private wanted: DataEntry | null;
  private shown: DataEntry | null = null;
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
    if (this.pageTimer) clearInterval(this.pageTimer);
  }

  /** A new manifest: its output for this zone comes on once it is cached; until then the old table stays. */
  update(manifest: PlayerManifest): void {
    this.manifest = manifest;
    const next = outputFor(manifest, this.zone.data);
    if (!next || next.outputId === this.wanted?.outputId) return;
    this.wanted = next;
    void this.load();
  }

  private async load(): Promise<void> {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const attempt = ++this.attempt;
    const entry = this.wanted;
    if (this.stopped || !entry || entry.outputId === this.shown?.outputId) return;
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
    this.shown = entry;
    this.render(doc);
  }

  /** Builds the table for `doc` beside the old one, measures it, fills its first page, then swaps. */
  private render(doc: DataDocument): void {
    const format = new CellFormatter({ timeZone: this.manifest.timeZone, now: this.ctx.now() });
    const columns = doc.columns;
    const cells = doc.rows.map((row) => columns.map((c) => format.format(row[c.name], c.type)));
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
    const fillRows = (rows: string[][]) => {
      tbody.replaceChildren(
        ...rows.map((r) => {
          const tr = el('tr');
          r.forEach((text, i) => {
            const td = el('td', `pl-align-${cellAlign(columns[i]!.type)}`);
            td.textContent = text;
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
    } else fillRows([cells[0]!]);
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
      if (cells.length > 0) fillRows(pageSlice(cells, plan, page));
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
