import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { TLSSocket } from 'node:tls';
import ipaddr from 'ipaddr.js';

/**
 * Server-side fetches of user-supplied URLs (DESIGN.md section 9): http/https only, time
 * and size limits, the resolved address checked when the connection is made (a DNS
 * answer cannot be swapped between check and use) and again on every redirect;
 * loopback, link-local and cloud metadata addresses refused; private LAN ranges allowed
 * by a setting. Every module that fetches a user's URL goes through here.
 */
export interface OutboundPolicy {
  /** 10/8, 172.16/12, 192.168/16, fc00::/7, 100.64/10. */
  allowPrivate: boolean;
  /** 127/8, ::1, 169.254/16, fe80::/10 (development and tests). Metadata addresses stay refused. */
  allowLoopback: boolean;
}

export interface OutboundOptions {
  /** POST sends `body` (a form or JSON: set its content-type in `headers`) and is never redirected (the body may carry credentials). */
  method?: 'GET' | 'HEAD' | 'POST';
  body?: string | Buffer;
  /**
   * Downloads: a 2xx answer's body is written here (backpressure respected) instead of being
   * buffered (`body` is then empty); `maxBytes` still caps it (`too_large`). A connection cut
   * mid-body rejects (`connection_failed`) after the bytes that arrived were written, so the
   * caller can resume from what it has. The caller ends the sink.
   */
  sink?: NodeJS.WritableStream;
  timeoutMs?: number;
  maxBytes?: number;
  maxRedirects?: number;
  headers?: Record<string, string>;
  /**
   * Headers that carry credentials (an API key header): sent to the first URL's origin only,
   * dropped when a redirect leaves it, as `authorization`, `proxy-authorization` and
   * `cookie` always are, so a redirect cannot hand a feed's secret to another host.
   */
  credentialHeaders?: readonly string[];
}

export interface OutboundHop {
  url: string;
  status: number;
  location?: string;
}

export interface OutboundResponse {
  url: string;
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** The body was cut at maxBytes. */
  truncated: boolean;
  redirects: OutboundHop[];
  /** TLS protocol and whether the certificate was valid (https). */
  tls: { protocol: string | null; authorized: boolean; error: string | null } | null;
  remoteAddress: string | null;
}

/** A refused or failed fetch; `code` says why (for diagnostics and error messages). */
export class OutboundError extends Error {
  constructor(
    readonly code:
      | 'invalid_url'
      | 'scheme_not_allowed'
      | 'address_not_allowed'
      | 'dns_failed'
      | 'timeout'
      | 'tls_error'
      | 'connection_failed'
      | 'too_many_redirects'
      | 'too_large',
    message: string,
    readonly redirects: OutboundHop[] = [],
  ) {
    super(message);
    this.name = 'OutboundError';
  }
}

const METADATA = ['169.254.169.254', '169.254.170.2', 'fd00:ec2::254', '100.100.100.200'];

/** Why an address may not be fetched under `policy`, or null when it may. */
export function addressRefusal(address: string, policy: OutboundPolicy): string | null {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.process(address);
  } catch {
    return `${address} is not an IP address`;
  }
  const normalized = ip.toString();
  if (METADATA.includes(normalized)) return `${normalized} is a cloud metadata address`;
  const range = ip.range();
  switch (range) {
    case 'unicast':
      return null;
    case 'private':
    case 'uniqueLocal':
    case 'carrierGradeNat':
      return policy.allowPrivate
        ? null
        : `${normalized} is a private network address (allowed only when PLACARD_FETCH_ALLOW_PRIVATE and the setting network.allowPrivateFetchTargets both say so)`;
    case 'loopback':
    case 'linkLocal':
      return policy.allowLoopback ? null : `${normalized} is a ${range === 'loopback' ? 'loopback' : 'link-local'} address`;
    default:
      return `${normalized} is a ${range} address`;
  }
}

type LookupCb = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

function guardedLookup(policy: OutboundPolicy) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCb) => {
    dns.lookup(hostname, { all: true, family: options.family ?? 0 }, (err, addresses) => {
      if (err) return callback(err, '');
      const allowed = addresses.filter((a) => addressRefusal(a.address, policy) === null);
      if (allowed.length === 0) {
        const why = addresses.length ? addressRefusal(addresses[0]!.address, policy)! : `${hostname} has no address`;
        const e = Object.assign(new Error(why), { code: 'EADDRNOTALLOWED' }) as NodeJS.ErrnoException;
        return callback(e, '');
      }
      if (options.all) return callback(null, allowed);
      return callback(null, allowed[0]!.address, allowed[0]!.family);
    });
  };
}

function checkUrl(raw: string, policy: OutboundPolicy, redirects: OutboundHop[]): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundError('invalid_url', `${raw.slice(0, 200)} is not a URL`, redirects);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new OutboundError('scheme_not_allowed', `Only http and https URLs are fetched (not ${url.protocol})`, redirects);
  if (url.username || url.password) throw new OutboundError('invalid_url', 'URLs with credentials are not fetched', redirects);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(host)) {
    const why = addressRefusal(host, policy);
    if (why) throw new OutboundError('address_not_allowed', why, redirects);
  }
  return url;
}

const TLS_CODES = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|HOSTNAME|ERR_TLS|SSL|EPROTO/;

function once(
  url: URL,
  policy: OutboundPolicy,
  options: Required<Pick<OutboundOptions, 'method' | 'timeoutMs' | 'maxBytes'>> & { headers: Record<string, string> } & Pick<OutboundOptions, 'body' | 'sink'>,
  deadline: number,
) {
  return new Promise<Omit<OutboundResponse, 'redirects' | 'url'>>((resolve, reject) => {
    const lib = url.protocol === 'https:' ? https : http;
    const remaining = Math.max(1, deadline - Date.now());
    const req = lib.request(
      url,
      {
        method: options.method,
        headers: { 'user-agent': 'Placard/1 (+digital signage server)', accept: '*/*', ...options.headers },
        lookup: guardedLookup(policy) as unknown as typeof dns.lookup,
        timeout: remaining,
        agent: false,
      },
      (res) => {
        const socket = res.socket as TLSSocket;
        const tls =
          url.protocol === 'https:'
            ? {
                protocol: socket.getProtocol?.() ?? null,
                authorized: socket.authorized ?? false,
                error: socket.authorizationError ? String(socket.authorizationError) : null,
              }
            : null;
        const chunks: Buffer[] = [];
        let size = 0;
        let truncated = false;
        const sink = options.sink;
        if (sink && (res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300) {
          sink.once('error', (e: Error) => {
            res.destroy();
            fail(e as NodeJS.ErrnoException);
          });
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size > options.maxBytes) {
              res.destroy();
              return fail(Object.assign(new Error(`The answer is larger than ${options.maxBytes} bytes`), { code: 'ETOOLARGE' }));
            }
            if (!sink.write(c)) {
              res.pause();
              sink.once('drain', () => res.resume());
            }
          });
          res.on('end', () => {
            clearTimeout(timer);
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.alloc(0),
              truncated: false,
              tls,
              remoteAddress: socket.remoteAddress ?? null,
            });
          });
          res.on('error', fail);
          res.on('close', () => {
            if (!res.complete) fail(Object.assign(new Error('the connection closed before the whole body arrived'), { code: 'ECONNRESET' }));
          });
          return;
        }
        res.on('data', (c: Buffer) => {
          if (truncated) return;
          if (size + c.length > options.maxBytes) {
            chunks.push(c.subarray(0, options.maxBytes - size));
            size = options.maxBytes;
            truncated = true;
            res.destroy();
            finish();
            return;
          }
          chunks.push(c);
          size += c.length;
        });
        let done = false;
        const finish = () => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks),
            truncated,
            tls,
            remoteAddress: socket.remoteAddress ?? null,
          });
        };
        res.on('end', finish);
        res.on('error', (e) => (truncated ? finish() : fail(e)));
      },
    );
    const timer = setTimeout(() => req.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })), remaining);
    const fail = (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(e);
    };
    req.on('timeout', () => req.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })));
    req.on('error', fail);
    req.end(options.body);
  });
}

/** Fetches a user's URL under `policy`; follows up to `maxRedirects` redirects, each checked. */
export async function safeFetch(rawUrl: string, policy: OutboundPolicy, options: OutboundOptions = {}): Promise<OutboundResponse> {
  const opts = {
    method: options.method ?? 'GET',
    timeoutMs: options.timeoutMs ?? 10_000,
    maxBytes: options.maxBytes ?? 2 * 1024 * 1024,
    headers: { ...(options.body !== undefined ? { 'content-length': String(Buffer.byteLength(options.body)) } : {}), ...options.headers },
    body: options.body,
    sink: options.sink,
  };
  const maxRedirects = opts.method === 'POST' ? 0 : (options.maxRedirects ?? 5);
  const deadline = Date.now() + opts.timeoutMs;
  const redirects: OutboundHop[] = [];
  let url = checkUrl(rawUrl, policy, redirects);
  const origin = url.origin;
  const bound = new Set(['authorization', 'proxy-authorization', 'cookie', ...(options.credentialHeaders ?? []).map((h) => h.toLowerCase())]);
  const elsewhere = Object.fromEntries(Object.entries(opts.headers).filter(([h]) => !bound.has(h.toLowerCase())));
  for (;;) {
    let res;
    try {
      res = await once(url, policy, url.origin === origin ? opts : { ...opts, headers: elsewhere }, deadline);
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      const code = e.code ?? '';
      if (code === 'EADDRNOTALLOWED') throw new OutboundError('address_not_allowed', e.message, redirects);
      if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ENODATA')
        throw new OutboundError('dns_failed', `${url.hostname} could not be resolved`, redirects);
      if (code === 'ETIMEDOUT' || code === 'ESOCKETTIMEDOUT') throw new OutboundError('timeout', `No answer within ${opts.timeoutMs} ms`, redirects);
      if (code === 'ETOOLARGE') throw new OutboundError('too_large', e.message, redirects);
      if (TLS_CODES.test(code) || TLS_CODES.test(e.message)) throw new OutboundError('tls_error', `TLS problem: ${code || e.message}`, redirects);
      throw new OutboundError('connection_failed', `${code || 'connection failed'}: ${e.message}`, redirects);
    }
    const location = res.headers.location;
    if (res.status >= 300 && res.status < 400 && location && opts.method !== 'POST') {
      redirects.push({ url: url.toString(), status: res.status, location });
      if (redirects.length > maxRedirects) throw new OutboundError('too_many_redirects', `More than ${maxRedirects} redirects`, redirects);
      url = checkUrl(new URL(location, url).toString(), policy, redirects);
      continue;
    }
    return { ...res, url: url.toString(), redirects };
  }
}

/** What stops a page from showing in an iframe of the player's origin. */
export function frameBlockers(headers: http.IncomingHttpHeaders): string[] {
  const problems: string[] = [];
  const xfo = String(headers['x-frame-options'] ?? '').trim();
  if (xfo && /deny|sameorigin/i.test(xfo)) problems.push(`X-Frame-Options: ${xfo}`);
  const csp = ([] as string[]).concat(headers['content-security-policy'] ?? []).join(';');
  const fa = /frame-ancestors\s+([^;]*)/i.exec(csp);
  if (fa) {
    const sources = fa[1]!.trim();
    if (!/(^|\s)\*(\s|$)/.test(sources)) problems.push(`Content-Security-Policy frame-ancestors ${sources || "'none'"}`);
  }
  return problems;
}
