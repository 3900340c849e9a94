import { z } from 'zod';
import { remoteConfigBase } from './remote.js';
import { COLUMN_TYPES } from './types.js';

/* The `json` provider's config and limits; the parser (json.ts, jsonpath-plus) loads at the first fetch. */

/** Bounds of what one JSON document yields. */
export const JSON_LIMITS = { defaultRows: 10_000, maxRows: 100_000, maxColumns: 200, maxCellChars: 65_536, flattenDepth: 3 } as const;

const Expression = z.string().trim().min(1).max(1000);

export const jsonColumn = z.object({
  name: z.string().trim().min(1).max(100).describe('The column’s name'),
  path: Expression.describe('JSONPath into one row (e.g. $.price or $.location.name); its first match is the cell'),
  type: z.enum(COLUMN_TYPES).optional().describe('The cell type; detected from the values when left out'),
});

export const jsonConfig = remoteConfigBase
  .extend({
    rowsPath: Expression.default('$').describe(
      'JSONPath selecting the rows (e.g. $.data.items[*]); a match that is a list gives its elements. $ is the whole document.',
    ),
    columns: z
      .array(jsonColumn)
      .min(1)
      .max(JSON_LIMITS.maxColumns)
      .optional()
      .describe('Columns mapped from each row; left out, every field of the rows becomes a column (nested fields as a.b)'),
    maxRows: z.number().int().min(1).max(JSON_LIMITS.maxRows).default(JSON_LIMITS.defaultRows).describe('Rows kept; the rest are cut with a warning'),
  })
  .superRefine((config, ctx) => {
    const seen = new Set<string>();
    for (const [i, column] of (config.columns ?? []).entries()) {
      if (seen.has(column.name)) ctx.addIssue({ code: 'custom', path: ['columns', i, 'name'], message: `Two columns are named "${column.name}"` });
      seen.add(column.name);
    }
  });
export type JsonConfig = z.output<typeof jsonConfig>;
