import { z } from 'zod';
import { remoteConfigBase } from './remote.js';

/** The `csv` provider's config and limits; the parser (csv.ts, Papa Parse) loads at the first fetch. */
export const CSV_LIMITS = { defaultRows: 10_000, maxRows: 100_000 } as const;
const DELIMITERS = [',', ';', '\t', '|'] as const;

export const csvConfigSchema = remoteConfigBase.extend({
  hasHeader: z.boolean().default(true).describe('The first row names the columns (else they are col1, col2, ...)'),
  delimiter: z
    .enum(['auto', ...DELIMITERS])
    .default('auto')
    .describe('The character between values; auto detects comma, semicolon, tab or pipe'),
  encoding: z
    .enum(['auto', 'utf-8', 'utf-16le', 'utf-16be', 'windows-1252'])
    .default('auto')
    .describe('The character encoding; auto reads a byte-order mark, then UTF-8, then Windows-1252 (Latin-1)'),
  decimalSeparator: z
    .enum(['auto', '.', ','])
    .default('auto')
    .describe("The decimal mark of numbers; auto means ',' when the delimiter is ';' (as European spreadsheets write), else '.'"),
  maxRows: z.number().int().min(1).max(CSV_LIMITS.maxRows).default(CSV_LIMITS.defaultRows).describe('Rows kept at most (after the header)'),
});
export type CsvConfig = z.infer<typeof csvConfigSchema>;
