import { z } from 'zod';
import { COLUMN_TYPES, type ProviderDefinition } from './types.js';

/** Most columns a manual table declares. */
export const MAX_MANUAL_COLUMNS = 100;

export const manualColumn = z.object({
  name: z.string().trim().min(1).max(100).describe('The column’s name, as views and templates refer to it'),
  type: z.enum(COLUMN_TYPES).describe('What its cells hold'),
});

export const manualTableConfig = z
  .object({
    columns: z.array(manualColumn).max(MAX_MANUAL_COLUMNS).default([]).describe('The table’s columns, in order'),
  })
  .superRefine((config, ctx) => {
    const seen = new Set<string>();
    for (const [i, column] of config.columns.entries()) {
      if (seen.has(column.name)) ctx.addIssue({ code: 'custom', path: ['columns', i, 'name'], message: `Two columns are named "${column.name}"` });
      seen.add(column.name);
    }
  });
export type ManualTableConfig = z.output<typeof manualTableConfig>;

/**
 * A table kept in Placard: its columns are the config, its rows a plain ordered list in the
 * database (records, forms and approvals build on it later). Nothing to fetch.
 */
export const manualTableProvider: ProviderDefinition<ManualTableConfig> = {
  id: 'manual-table',
  name: 'Table',
  description: 'Rows you keep in Placard: a menu, a price list, a timetable.',
  configSchema: manualTableConfig,
  secretPaths: [],
  needs: ['Nothing outside Placard: people enter the rows'],
  refresh: null,
};
