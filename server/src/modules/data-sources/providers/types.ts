import type { z } from 'zod';
import type { OutboundPolicy } from '../../../platform/http/outbound.js';

/**
 * The data-source provider contract (issue 17, spec 4.5, DESIGN.md section 12). A provider
 * turns its config into a dataset: columns and rows. Remote providers fetch a document
 * through platform/http/outbound.ts (safeFetch, DESIGN.md section 9) and parse it; the
 * manual table keeps its rows in the database. Everything here is pure: no database, no
 * app state, so the module's service, the preview/inspect routes and the tests run the
 * very same code.
 */

export const COLUMN_TYPES = ['text', 'number', 'boolean', 'date', 'datetime', 'url', 'image', 'richtext'] as const;
export type ColumnType = (typeof COLUMN_TYPES)[number];

export interface Column {
  name: string;
  type: ColumnType;
}

/** A cell: text, number, boolean or null. Dates are ISO 8601 text (date: YYYY-MM-DD). */
export type Cell = string | number | boolean | null;
export type Row = Record<string, Cell>;

export interface Dataset {
  columns: Column[];
  rows: Row[];
  /** What a person should know about the data (skipped rows, guessed encodings, cut documents). */
  warnings: string[];
}

export const PROVIDER_IDS = ['manual-table', 'rss', 'json', 'csv', 'ical'] as const;
export type ProviderId = (typeof PROVIDER_IDS)[number];

/** What the last successful fetch left for a conditional GET. */
export interface ConditionalState {
  etag: string | null;
  lastModified: string | null;
  /** sha256 of the last body parsed: an unchanged body (no 304 support upstream) builds nothing either. */
  bodySha256: string | null;
}

/** One fetch attempt, as diagnostics list it. */
export interface FetchAttempt {
  at: string;
  url: string;
  /** HTTP status, or null when no answer came (timeout, refused address, DNS). */
  status: number | null;
  bytes: number;
  latencyMs: number;
  /** null on success; else a sentence a venue's admin understands. */
  error: string | null;
  /** The OutboundError code or a parse failure code ('parse_failed', 'http_status', ...). */
  errorCode: string | null;
}

export interface FetchContext {
  policy: OutboundPolicy;
  /** The source's IANA time zone (iCal expansion, relative dates). */
  timeZone: string;
  now: Date;
  /** Sent as If-None-Match / If-Modified-Since; omitted for preview and inspect. */
  previous?: ConditionalState | null;
  timeoutMs?: number;
  maxBytes?: number;
}

export type FetchOutcome =
  | { kind: 'unchanged'; attempt: FetchAttempt; state: ConditionalState }
  | { kind: 'data'; dataset: Dataset; attempt: FetchAttempt; state: ConditionalState };

/** A fetch or parse that failed: `attempt` says how far it got. */
export class ProviderFetchError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly attempt: FetchAttempt,
  ) {
    super(message);
    this.name = 'ProviderFetchError';
  }
}

export interface RefreshBounds {
  minSec: number;
  defaultSec: number;
  maxSec: number;
}

export interface ProviderDefinition<C = unknown> {
  id: ProviderId;
  name: string;
  description: string;
  /** Validates a config; its JSON Schema (z.toJSONSchema) is what provider-catalog answers. */
  configSchema: z.ZodType<C>;
  /**
   * Paths of secret values in a config, sealed at rest and answered as {set: true}: dotted
   * keys, `*` for every key of a map (e.g. 'auth.password', 'headers.*').
   */
  secretPaths: string[];
  /** What it needs, in words the catalog shows ('network access to the feed URL'). */
  needs: string[];
  /** null for providers that do not refresh (manual table). */
  refresh: RefreshBounds | null;
  /** Remote providers: fetch (conditionally when ctx.previous is set) and parse. */
  fetch?(config: C, ctx: FetchContext): Promise<FetchOutcome>;
}
