import { DateTime, IANAZone } from 'luxon';
import Papa from 'papaparse';
import { cellType } from './columns.js';
import { isoDateOf, isoWithOffset, wallToInstant } from './dates.js';
import { charsetOf, decodeText, guessedEncodingWarning } from './decode.js';
import { CSV_LIMITS, type CsvConfig } from './csv.config.js';
import type { Cell, Column, ColumnType, Dataset, FetchContext, Row } from './types.js';

export { CSV_LIMITS, type CsvConfig, csvConfigSchema } from './csv.config.js';

/**
 * The `csv` provider (issue 17, spec 4.5): a CSV document over HTTP, e.g. a spreadsheet's
 * "publish as CSV" link. Papa Parse reads it (quotes, delimiter detection); this file adds
 * what a venue's sheet needs: encoding detection (decode.ts), a header row made of unique
 * names, ragged rows padded, and column types inferred from the values: numbers (with a
 * decimal comma when the delimiter is ';', or when told), booleans, dates and datetimes
 * (ISO, dd.mm.yyyy, d/m/yyyy or m/d/yyyy decided per column), URLs and images; the rest text.
 */

type CsvParseConfig = Pick<CsvConfig, 'hasHeader' | 'delimiter' | 'encoding' | 'maxRows'> & Partial<Pick<CsvConfig, 'decimalSeparator'>>;

/** Names of the header row, trimmed, the empty ones named by position, the repeated ones suffixed (_2, _3...). */
export function uniqueNames(raw: readonly string[]): string[] {
  const used = new Set<string>();
  return raw.map((value, i) => {
    const base =
      value
        .replace(/^\uFEFF/, '')
        .trim()
        .slice(0, 200) || `column${i + 1}`;
    let name = base;
    for (let n = 2; used.has(name); n++) name = `${base}_${n}`;
    used.add(name);
    return name;
  });
}

/** Words of a yes/no column (English, German, French): a sheet's checkbox column exports TRUE/FALSE. */
const BOOLEAN: Record<string, boolean> = {
  true: true,
  false: false,
  yes: true,
  no: false,
  ja: true,
  nein: false,
  wahr: true,
  falsch: false,
  oui: true,
  non: false,
  vrai: true,
  faux: false,
};
const NUMBER_DOT = [/^[-+]?\d+(\.\d+)?([eE][-+]?\d+)?$/, /^[-+]?\.\d+$/, /^[-+]?\d{1,3}(,\d{3})+(\.\d+)?$/];
const NUMBER_COMMA = [/^[-+]?\d+(,\d+)?$/, /^[-+]?,\d+$/, /^[-+]?\d{1,3}(\.\d{3})+(,\d+)?$/];
/** "007", "0123": identifiers (postcodes, article numbers), not numbers. */
const LEADING_ZERO = /^[-+]?0\d/;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const ISO_DATETIME = /^\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i;
const DOTTED = /^(\d{1,2})\.(\d{1,2})\.(\d{4})(?:,?\s+(\d{1,2}):(\d{2})(?::(\d{2}))?)?$/;
const SLASHED = /^(\d{1,2})\/(\d{1,2})\/(\d{4})(?:,?\s+(\d{1,2}):(\d{2})(?::(\d{2}))?)?$/;

function toNumber(value: string, decimal: '.' | ','): number | null {
  const patterns = decimal === ',' ? NUMBER_COMMA : NUMBER_DOT;
  if (!patterns.some((p) => p.test(value)) || LEADING_ZERO.test(value)) return null;
  const normal = decimal === ',' ? value.replace(/\./g, '').replace(',', '.') : value.replace(/,/g, '');
  const n = Number(normal);
  return Number.isFinite(n) ? n : null;
}

interface DateParts {
  year: number;
  month: number;
  day: number;
  hour?: number;
  minute?: number;
  second?: number;
}

/** A day-first or month-first date (with an optional time) as its parts; null when it is not one. */
function slashParts(m: RegExpExecArray, order: 'dmy' | 'mdy'): DateParts {
  const a = Number(m[1]);
  const b = Number(m[2]);
  const [year, month, day] = [Number(m[3]), order === 'dmy' ? b : a, order === 'dmy' ? a : b];
  // Object literals, not spreads: a spread into a literal took 9 µs a value (V8's slow clone path).
  return m[4] ? { year, month, day, hour: Number(m[4]), minute: Number(m[5]), second: Number(m[6] ?? 0) } : { year, month, day };
}

/** A date cell ('YYYY-MM-DD') or a datetime cell (ISO with the zone's offset) from its parts. */
function fromParts(p: DateParts, zone: string): string | null {
  if (p.hour === undefined) return isoDateOf(p.year, p.month, p.day);
  const instant = wallToInstant(p, zone);
  return instant === null ? null : isoWithOffset(instant, zone);
}

const ISO_PARTS = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2})(\.\d+)?)?)?$/i;

function isoDateCell(value: string, zone: string): string | null {
  const m = ISO_PARTS.exec(value);
  if (m) {
    const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
    return fromParts(m[4] ? { year, month, day, hour: Number(m[4]), minute: Number(m[5]), second: Number(m[6] ?? 0) } : { year, month, day }, zone);
  }
  // With an offset of its own: kept as written, normalized.
  const d = DateTime.fromISO(value.replace(' ', 'T'), { setZone: true });
  return d.isValid ? d.toISO({ suppressMilliseconds: true }) : null;
}

type Conversion = { type: ColumnType; convert: (v: string) => Cell; note?: string };

/** How a column's values (trimmed, non-empty) are read: the narrowest reading that fits every one. */
function conversionFor(name: string, values: string[], decimal: '.' | ',', delimiter: string, zone: string): Conversion | null {
  if (values.length === 0) return null;
  if (values.every((v) => v.toLowerCase() in BOOLEAN)) return { type: 'boolean', convert: (v) => BOOLEAN[v.toLowerCase()] ?? null };
  if (values.every((v) => toNumber(v, decimal) !== null)) return { type: 'number', convert: (v) => toNumber(v, decimal) };
  // Each distinct value is read once: the check below and the conversion share it.
  const memo = (read: (v: string) => string | null) => {
    const seen = new Map<string, string | null>();
    return (v: string) => {
      let r = seen.get(v);
      if (r === undefined) seen.set(v, (r = read(v)));
      return r;
    };
  };
  if (values.every((v) => ISO_DATE.test(v) || ISO_DATETIME.test(v))) {
    const read = memo((v) => isoDateCell(v, zone));
    if (values.every((v) => read(v) !== null)) return { type: values.every((v) => ISO_DATE.test(v)) ? 'date' : 'datetime', convert: read };
  }
  if (values.every((v) => DOTTED.test(v))) {
    const read = memo((v) => fromParts(slashParts(DOTTED.exec(v)!, 'dmy'), zone));
    if (values.every((v) => read(v) !== null)) return { type: values.every((v) => !DOTTED.exec(v)![4]) ? 'date' : 'datetime', convert: read };
  }
  if (values.every((v) => SLASHED.test(v))) {
    const parts = values.map((v) => SLASHED.exec(v)!);
    const firstOver12 = parts.some((m) => Number(m[1]) > 12);
    const secondOver12 = parts.some((m) => Number(m[2]) > 12);
    if (!(firstOver12 && secondOver12)) {
      const order: 'dmy' | 'mdy' = firstOver12 ? 'dmy' : secondOver12 ? 'mdy' : delimiter === ',' ? 'mdy' : 'dmy';
      const read = memo((v) => fromParts(slashParts(SLASHED.exec(v)!, order), zone));
      if (values.every((v) => read(v) !== null)) {
        const note =
          firstOver12 || secondOver12
            ? undefined
            : `Column "${name}": dates like ${values[0]} could be day-first or month-first; they were read as ${order === 'dmy' ? 'day/month/year' : 'month/day/year'}`;
        return { type: parts.every((m) => !m[4]) ? 'date' : 'datetime', convert: read, note };
      }
    }
  }
  return null;
}

/** The types of text cells (url, image, rich text or text), as columns.ts reads single values. */
function textType(values: Cell[]): ColumnType {
  const types = new Set(values.map(cellType).filter((t): t is ColumnType => t !== null));
  if (types.size === 1) {
    const only = [...types][0]!;
    if (only === 'url' || only === 'image' || only === 'richtext') return only;
  }
  if (types.size === 2 && types.has('url') && types.has('image')) return 'url';
  return 'text';
}

/**
 * The delimiter of `text`: each candidate splits a sample (Papa Parse, quotes respected);
 * the one under which most rows have the same number of values (at least two) wins, then
 * the one giving more values, then ';' before ','. Papa's own guess prefers the lowest
 * change between consecutive rows, which one short last row turns from ';' to ',' in a
 * European sheet whose decimal commas split every row alike.
 */
export function detectDelimiter(text: string): string {
  const cut = text.length > 65_536 ? text.slice(0, text.lastIndexOf('\n', 65_536) + 1 || 65_536) : text;
  let best: { delimiter: string; share: number; count: number } | null = null;
  for (const delimiter of [';', ',', '\t', '|']) {
    const sample = Papa.parse<string[]>(cut, { delimiter, preview: 30, skipEmptyLines: 'greedy' }).data;
    if (sample.length === 0) continue;
    const counts = new Map<number, number>();
    for (const row of sample) counts.set(row.length, (counts.get(row.length) ?? 0) + 1);
    let count = 0;
    let rows = 0;
    for (const [c, n] of counts) if (n > rows || (n === rows && c > count)) [count, rows] = [c, n];
    if (count < 2) continue;
    const share = rows / sample.length;
    if (!best || share > best.share || (share === best.share && count > best.count)) best = { delimiter, share, count };
  }
  return best?.delimiter ?? ',';
}

/**
 * Parses a CSV document into typed rows. Throws an Error with a sentence for the admin
 * when there is nothing to read (empty, or an HTML page where the CSV was expected).
 */
export function parseCsv(body: Buffer, contentType: string | null, config: CsvParseConfig, ctx: Pick<FetchContext, 'timeZone'>): Dataset {
  const warnings: string[] = [];
  if (body.length === 0) throw new Error('the document is empty');
  const decoded = decodeText(body, [config.encoding === 'auto' ? null : config.encoding, charsetOf(contentType)]);
  const guess = guessedEncodingWarning(decoded);
  if (guess) warnings.push(guess);
  const text = decoded.text;
  if (!text.trim()) throw new Error('the document is empty');
  if (/^\s*<(!doctype\s+html|html[\s>])/i.test(text))
    throw new Error('the address answered an HTML page, not CSV (for a spreadsheet, use its "publish to the web as CSV" link)');
  const zone = IANAZone.isValidZone(ctx.timeZone) ? ctx.timeZone : 'UTC';
  const maxRows = Math.min(config.maxRows, CSV_LIMITS.maxRows);
  const headerRows = config.hasHeader ? 1 : 0;

  const delimiter = config.delimiter === 'auto' ? detectDelimiter(text) : config.delimiter;
  const parsed = Papa.parse<string[]>(text, {
    header: false,
    delimiter,
    skipEmptyLines: 'greedy',
  });
  const quoteErrors = parsed.errors.filter((e) => e.type === 'Quotes');
  if (quoteErrors.length) {
    const first = quoteErrors[0]!;
    warnings.push(`A quoted value is not closed properly (row ${(first.row ?? 0) + 1}); the rows after it may be merged`);
  }
  const data = parsed.data;
  if (data.length === 0) throw new Error('the document has no rows');

  const header = config.hasHeader ? data[0]! : [];
  let body_ = data.slice(headerRows);
  if (body_.length > maxRows) {
    warnings.push(`The document has ${body_.length} rows; only the first ${maxRows} are used (maxRows)`);
    body_ = body_.slice(0, maxRows);
  }
  const width = config.hasHeader ? header.length : body_.reduce((w, r) => Math.max(w, r.length), 0);
  const names = config.hasHeader ? uniqueNames(header) : Array.from({ length: width }, (_, i) => `col${i + 1}`);
  if (config.hasHeader) {
    const renamed = header.filter((h, i) => h.replace(/^\uFEFF/, '').trim() !== names[i]).length;
    if (renamed) warnings.push(`${renamed} header name(s) were empty or repeated and were made unique (${names.join(', ').slice(0, 200)})`);
  }

  let short = 0;
  let long = 0;
  const cells: string[][] = body_.map((r) => {
    if (r.length < width) short++;
    if (r.length > width) long++;
    return Array.from({ length: width }, (_, i) => (r[i] ?? '').trim());
  });
  if (short) warnings.push(`${short} row(s) had fewer values than the ${width} columns; the missing ones are empty`);
  if (long) warnings.push(`${long} row(s) had more values than the ${width} columns; the extra values were left out`);

  const decimal: '.' | ',' = config.decimalSeparator && config.decimalSeparator !== 'auto' ? config.decimalSeparator : delimiter === ';' ? ',' : '.';
  const columns: Column[] = [];
  const converters: ((v: string) => Cell)[] = [];
  for (const [i, name] of names.entries()) {
    const values = cells.map((r) => r[i]!).filter((v) => v !== '');
    const conversion = conversionFor(name, values, decimal, delimiter, zone);
    if (conversion) {
      if (conversion.note) warnings.push(conversion.note);
      columns.push({ name, type: conversion.type });
      converters.push(conversion.convert);
    } else {
      columns.push({ name, type: textType(values) });
      converters.push((v) => v);
    }
  }
  const rows: Row[] = cells.map((r) => {
    const row: Row = {};
    for (const [i, name] of names.entries()) {
      const v = r[i]!;
      row[name] = v === '' ? null : converters[i]!(v);
    }
    return row;
  });
  return { columns, rows, warnings };
}
