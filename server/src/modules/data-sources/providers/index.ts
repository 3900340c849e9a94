import { csvProvider } from './csv.js';
import { icalProvider } from './ical.js';
import { jsonProvider } from './json.js';
import { manualTableProvider } from './manual-table.js';
import { rssProvider } from './rss.js';
import type { ProviderDefinition } from './types.js';

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
