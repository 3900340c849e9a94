import { createHash } from 'node:crypto';
import { z } from 'zod';
import { OutboundError, safeFetch } from '../../../platform/http/outbound.js';
import type { ConditionalState, Dataset, FetchAttempt, FetchContext, FetchOutcome } from './types.js';
import { ProviderFetchError } from './types.js';

/** Limits of one remote fetch (DESIGN.md section 9); a source may lower, never raise, them. */
export const REMOTE_LIMITS = { timeoutMs: 15_000, maxBytes: 10 * 1024 * 1024, maxRedirects: 5 } as const;

/**
 * The part of every remote provider's config that says where and how to fetch. Header
 * values and credentials are secrets (REMOTE_SECRET_PATHS): sealed at rest, answered as
 * {set: true}.
 */
export const remoteConfigBase = z.object({
  url: z
    .url({ protocol: /^https?$/ })
    .max(2000)
    // The JSON Schema (provider-catalog) says what the protocol check says: http or https only.
    .meta({ pattern: '^[Hh][Tt][Tt][Pp][Ss]?://' })
    .describe('The http or https address of the document'),
  headers: z
    .record(z.string().regex(/^[A-Za-z0-9-]{1,100}$/), z.string().max(4000))
    .optional()
    .describe('Extra request headers (an API key, for instance); their values are kept secret'),
  auth: z
    .discriminatedUnion('type', [
      z.object({ type: z.literal('basic'), username: z.string().max(200), password: z.string().max(1000) }),
      z.object({ type: z.literal('bearer'), token: z.string().min(1).max(4000) }),
    ])
    .optional()
    .describe('Credentials sent with every fetch; kept secret'),
});
export type RemoteConfigBase = z.infer<typeof remoteConfigBase>;
export const REMOTE_SECRET_PATHS = ['headers.*', 'auth.password', 'auth.token'];

export type RemoteDocument =
  | { kind: 'unchanged'; attempt: FetchAttempt; state: ConditionalState }
  | { kind: 'body'; body: Buffer; contentType: string | null; url: string; attempt: FetchAttempt; state: ConditionalState };

function requestHeaders(config: RemoteConfigBase, previous: ConditionalState | null | undefined, accept: string) {
  const headers: Record<string, string> = { accept, ...config.headers };
  if (config.auth?.type === 'basic') headers.authorization = `Basic ${Buffer.from(`${config.auth.username}:${config.auth.password}`).toString('base64')}`;
  if (config.auth?.type === 'bearer') headers.authorization = `Bearer ${config.auth.token}`;
  if (previous?.etag) headers['if-none-match'] = previous.etag;
  if (previous?.lastModified) headers['if-modified-since'] = previous.lastModified;
  return headers;
}

/**
 * Fetches a remote provider's document: conditionally when `ctx.previous` is set (a 304,
 * or a body whose sha256 matches the last one, answers `unchanged`), under the outbound
 * guard. Failures throw ProviderFetchError with the attempt and a sentence for the admin.
 */
export async function fetchDocument(config: RemoteConfigBase, ctx: FetchContext, accept = '*/*'): Promise<RemoteDocument> {
  const started = Date.now();
  const at = ctx.now.toISOString();
  const maxBytes = Math.min(ctx.maxBytes ?? REMOTE_LIMITS.maxBytes, REMOTE_LIMITS.maxBytes);
  const timeoutMs = Math.min(ctx.timeoutMs ?? REMOTE_LIMITS.timeoutMs, REMOTE_LIMITS.timeoutMs);
  const attempt = (status: number | null, bytes: number, error: string | null, errorCode: string | null): FetchAttempt => ({
    at,
    url: config.url,
    status,
    bytes,
    latencyMs: Date.now() - started,
    error,
    errorCode,
  });
  let res: Awaited<ReturnType<typeof safeFetch>>;
  try {
    res = await safeFetch(config.url, ctx.policy, {
      timeoutMs,
      maxBytes: maxBytes + 1,
      maxRedirects: REMOTE_LIMITS.maxRedirects,
      headers: requestHeaders(config, ctx.previous, accept),
      // A redirect to another host gets neither the auth header nor the secret headers.
      credentialHeaders: Object.keys(config.headers ?? {}),
    });
  } catch (err) {
    if (err instanceof OutboundError) throw new ProviderFetchError(err.code, err.message, attempt(null, 0, err.message, err.code));
    throw err;
  }
  const previous = ctx.previous ?? null;
  if (res.status === 304 && previous) return { kind: 'unchanged', attempt: attempt(304, 0, null, null), state: previous };
  if (res.status < 200 || res.status > 299) {
    const why = `The server answered HTTP ${res.status}`;
    throw new ProviderFetchError('http_status', why, attempt(res.status, res.body.length, why, 'http_status'));
  }
  if (res.truncated || res.body.length > maxBytes) {
    const why = `The document is larger than ${Math.round(maxBytes / 1024 / 1024)} MB; it was cut and not used`;
    throw new ProviderFetchError('too_large', why, attempt(res.status, res.body.length, why, 'too_large'));
  }
  const header = (name: string) => {
    const v = res.headers[name];
    return (Array.isArray(v) ? v[0] : v) ?? null;
  };
  const state: ConditionalState = {
    etag: header('etag'),
    lastModified: header('last-modified'),
    bodySha256: createHash('sha256').update(res.body).digest('hex'),
  };
  const done = attempt(res.status, res.body.length, null, null);
  if (previous?.bodySha256 && previous.bodySha256 === state.bodySha256) return { kind: 'unchanged', attempt: done, state };
  return { kind: 'body', body: res.body, contentType: header('content-type'), url: res.url, attempt: done, state };
}

/** A remote provider's parser: the document's bytes -> a dataset (throws when it cannot read them). */
export type RemoteParse<C> = (body: Buffer, contentType: string | null, config: C, ctx: FetchContext, url: string) => Dataset;

/**
 * The fetch of a remote provider: the document, then its parser; a parse failure is a failed
 * attempt (the last good snapshot stays) with the parser's message. The parser is also given
 * the address the document came from after redirects (relative links resolve against it).
 * `parser` answers it once a document is there to parse: its module, with the library
 * behind it, loads at the first fetch instead of at start (index.ts).
 */
export function remoteFetch<C extends RemoteConfigBase>(accept: string, parser: () => Promise<RemoteParse<C>>) {
  return async (config: C, ctx: FetchContext): Promise<FetchOutcome> => {
    const doc = await fetchDocument(config, ctx, accept);
    if (doc.kind === 'unchanged') return doc;
    const parse = await parser();
    try {
      return { kind: 'data', dataset: parse(doc.body, doc.contentType, config, ctx, doc.url), attempt: doc.attempt, state: doc.state };
    } catch (err) {
      const why = `The document could not be read: ${(err as Error).message}`;
      throw new ProviderFetchError('parse_failed', why, { ...doc.attempt, error: why, errorCode: 'parse_failed' });
    }
  };
}
