import { type CsvConfig, csvConfigSchema } from './csv.config.js';
import { type IcalConfig, icalConfigSchema } from './ical.config.js';
import { type JsonConfig, jsonConfig } from './json.config.js';
import { manualTableProvider } from './manual-table.js';
import { REMOTE_SECRET_PATHS, remoteFetch } from './remote.js';
import { type RssConfig, rssConfigSchema } from './rss.config.js';
import type { ProviderDefinition } from './types.js';

// Each remote provider's parser (rss.ts, ical.ts, csv.ts, json.ts) and its library
// (feedsmith, ical.js, Papa Parse, jsonpath-plus; sanitize-html, htmlparser2 and iconv-lite
// under them: ~6 MiB of heap) load at the provider's first fetch, not at start
// (docs/performance.md, "Idle memory"). The definitions and config schemas here are light.

export const rssProvider: ProviderDefinition<RssConfig> = {
  id: 'rss',
  name: 'News feed (RSS, Atom, JSON Feed)',
  description: 'Items of an RSS 2.0, Atom or JSON Feed document: title, summary, link, date, author and image. The format is detected from the document.',
  configSchema: rssConfigSchema,
  secretPaths: REMOTE_SECRET_PATHS,
  needs: ['network access from the server to the feed address'],
  refresh: { minSec: 60, defaultSec: 900, maxSec: 86_400 },
  fetch: remoteFetch<RssConfig>(
    'application/rss+xml, application/atom+xml, application/feed+json, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.5',
    async () => (await import('./rss.js')).parseRss,
  ),
};

export const jsonProvider: ProviderDefinition<JsonConfig> = {
  id: 'json',
  name: 'JSON',
  description: 'A JSON document on the web (an API, an export): rows chosen by a JSONPath expression, columns mapped from each row.',
  configSchema: jsonConfig,
  secretPaths: REMOTE_SECRET_PATHS,
  needs: ['Network access from the server to the document’s address', 'An API key or credentials, when the document needs them'],
  refresh: { minSec: 60, defaultSec: 300, maxSec: 86_400 },
  fetch: remoteFetch<JsonConfig>('application/json, */*;q=0.5', async () => {
    const { parseJsonDocument } = await import('./json.js');
    return (body, contentType, config) => parseJsonDocument(body, contentType, config);
  }),
};

export const csvProvider: ProviderDefinition<CsvConfig> = {
  id: 'csv',
  name: 'CSV file',
  description:
    'Rows of a CSV document at an address, such as a spreadsheet published as CSV. Delimiter, encoding and column types are detected; the first row names the columns.',
  configSchema: csvConfigSchema,
  secretPaths: REMOTE_SECRET_PATHS,
  needs: ['network access from the server to the CSV address'],
  refresh: { minSec: 60, defaultSec: 900, maxSec: 86_400 },
  fetch: remoteFetch<CsvConfig>('text/csv, text/plain;q=0.9, */*;q=0.5', async () => (await import('./csv.js')).parseCsv),
};

export const icalProvider: ProviderDefinition<IcalConfig> = {
  id: 'ical',
  name: 'Calendar (iCal)',
  description:
    'Events of an iCalendar (ICS) feed within a window of days, repeating events expanded in their time zone: title, description, location, start, end, url.',
  configSchema: icalConfigSchema,
  secretPaths: REMOTE_SECRET_PATHS,
  needs: ['network access from the server to the calendar address'],
  refresh: { minSec: 60, defaultSec: 900, maxSec: 86_400 },
  fetch: remoteFetch<IcalConfig>('text/calendar, text/plain;q=0.9, */*;q=0.5', async () => (await import('./ical.js')).parseIcal),
};

/**
 * Every provider this server offers, in the catalog's order. A provider is one object
 * (providers/types.ts); adding one is adding it here.
 */
// biome-ignore lint/suspicious/noExplicitAny: each provider has its own config type
export const PROVIDERS: readonly ProviderDefinition<any>[] = [manualTableProvider, rssProvider, jsonProvider, csvProvider, icalProvider];

/** The provider of that id, or undefined. */
// biome-ignore lint/suspicious/noExplicitAny: each provider has its own config type
export function providerById(id: string): ProviderDefinition<any> | undefined {
  return PROVIDERS.find((p) => p.id === id);
}

export const providerIds = (): string[] => PROVIDERS.map((p) => p.id);

export type { ProviderDefinition } from './types.js';
