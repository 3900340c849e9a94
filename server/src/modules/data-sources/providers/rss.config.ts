import { z } from 'zod';
import { remoteConfigBase } from './remote.js';
import type { Column } from './types.js';

/** The `rss` provider's config and columns; the parser (rss.ts, feedsmith) loads at the first fetch. */
export const rssConfigSchema = remoteConfigBase.extend({
  maxItems: z.number().int().min(1).max(1000).default(50).describe('How many items to keep (the newest first, as the feed lists them)'),
});
export type RssConfig = z.infer<typeof rssConfigSchema>;

export const RSS_COLUMNS: Column[] = [
  { name: 'title', type: 'text' },
  { name: 'summary', type: 'text' },
  { name: 'summaryHtml', type: 'richtext' },
  { name: 'link', type: 'url' },
  { name: 'published', type: 'datetime' },
  { name: 'author', type: 'text' },
  { name: 'image', type: 'image' },
  { name: 'guid', type: 'text' },
];
