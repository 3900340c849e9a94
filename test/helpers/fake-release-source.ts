import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';

/**
 * A release source for tests (docs/player-releases.md "The release source"): a real HTTP
 * server on 127.0.0.1 with RFC 8414 discovery, the RFC 8628 device authorization and token
 * endpoints (form-encoded requests; JSON answers, errors as HTTP 400 with the RFC's codes
 * `authorization_pending`, `slow_down`, `access_denied`, `expired_token`), the release list
 * (Bearer token checked) and artifact downloads with Range, and switches to cut a download
 * after N bytes or serve other bytes than the list promises. The test plays the admin with
 * `approve()` / `deny()` / `expire()`. Every request is logged.
 */

export interface FakeArtifact {
  architecture: string;
  kind: 'apk' | 'tarball' | 'deb' | 'web';
  fileName: string;
  bytes: Buffer;
  /** base64 Ed25519 signature over the SHA-256 digest; null or absent: unsigned. */
  signature?: string | null;
  /** The sha256 the list announces (default: the bytes' own): a wrong one makes the download "corrupt". */
  sha256?: string;
  /** Served instead of `bytes` (the list still announces `bytes`' size and sha256): corruption in transit. */
  servedBytes?: Buffer;
}

export interface FakeRelease {
  id: string;
  family: string;
  version: string;
  channel: 'stable' | 'beta';
  notes?: string;
  artifacts: FakeArtifact[];
}

export interface LoggedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  form: Record<string, string>;
  authorization: string | null;
  range: string | null;
  /** What the fake answered: the HTTP status and, for OAuth errors, the code. */
  status: number;
  error: string | null;
}

export interface FakeReleaseSource {
  url: string;
  /** Every request, in order. */
  requests: LoggedRequest[];
  /** Token endpoint requests only. */
  tokenRequests(): LoggedRequest[];
  /** The access token issued on approval. */
  readonly accessToken: string;
  /** The current device grant's codes (the last one started). */
  readonly deviceCode: string | null;
  readonly userCode: string | null;
  approve(): void;
  deny(): void;
  expire(): void;
  /** The next `n` token requests answer `slow_down` (RFC 8628 3.5: the client adds 5 s to its interval). */
  slowDown(n?: number): void;
  /** The next `times` artifact downloads each send `n` bytes of their body, then the connection is cut. */
  cutDownloadsAfter(n: number, times?: number): void;
  /** Answer the release list with 401 (a revoked token). */
  revokeToken(): void;
  addRelease(r: FakeRelease): void;
  close(): Promise<void>;
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

export async function startFakeReleaseSource(t: Test, options: { interval?: number; expiresIn?: number } = {}): Promise<FakeReleaseSource> {
  const interval = options.interval ?? 1;
  const expiresIn = options.expiresIn ?? 600;
  const accessToken = `rs-token-${randomBytes(12).toString('hex')}`;
  const requests: LoggedRequest[] = [];
  const releases: FakeRelease[] = [];
  let grant: { deviceCode: string; userCode: string; state: 'pending' | 'approved' | 'denied' | 'expired' } | null = null;
  let slowDowns = 0;
  let cutAfter: number | null = null;
  let cuts = 0;
  let tokenValid = true;
  let base = '';

  const json = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(JSON.stringify(body));
  };

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', base);
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const form = (req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded') ? Object.fromEntries(new URLSearchParams(raw)) : {};
    const entry: LoggedRequest = {
      method: req.method ?? '',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      form,
      authorization: req.headers.authorization ?? null,
      range: req.headers.range ?? null,
      status: 0,
      error: null,
    };
    requests.push(entry);
    const answer = (status: number, body: unknown) => {
      entry.status = status;
      if (status >= 400 && body && typeof body === 'object' && 'error' in body) entry.error = String((body as { error: unknown }).error);
      json(res, status, body);
    };
    const oauthError = (error: string, description?: string) => answer(400, { error, ...(description ? { error_description: description } : {}) });
    const bearerOk = () => tokenValid && req.headers.authorization === `Bearer ${accessToken}`;

    if (req.method === 'GET' && url.pathname === '/.well-known/oauth-authorization-server') {
      return answer(200, {
        issuer: base,
        device_authorization_endpoint: `${base}/oauth/device_authorization`,
        token_endpoint: `${base}/oauth/token`,
        grant_types_supported: ['urn:ietf:params:oauth:grant-type:device_code'],
      });
    }
    if (req.method === 'POST' && url.pathname === '/oauth/device_authorization') {
      if (!form.client_id) return oauthError('invalid_client', 'client_id is required');
      grant = {
        deviceCode: randomBytes(16).toString('hex'),
        userCode: `${randomBytes(2).toString('hex')}-${randomBytes(2).toString('hex')}`.toUpperCase(),
        state: 'pending',
      };
      return answer(200, {
        device_code: grant.deviceCode,
        user_code: grant.userCode,
        verification_uri: `${base}/activate`,
        verification_uri_complete: `${base}/activate?user_code=${grant.userCode}`,
        expires_in: expiresIn,
        interval,
      });
    }
    if (req.method === 'POST' && url.pathname === '/oauth/token') {
      if (form.grant_type !== 'urn:ietf:params:oauth:grant-type:device_code') return oauthError('unsupported_grant_type');
      if (!form.client_id) return oauthError('invalid_client');
      if (!grant || form.device_code !== grant.deviceCode) return oauthError('invalid_grant', 'unknown device code');
      if (grant.state === 'expired') return oauthError('expired_token');
      if (grant.state === 'denied') return oauthError('access_denied');
      if (slowDowns > 0) {
        slowDowns--;
        return oauthError('slow_down');
      }
      if (grant.state === 'pending') return oauthError('authorization_pending');
      grant = null; // a device code is used once
      return answer(200, { access_token: accessToken, token_type: 'Bearer', expires_in: 86_400 });
    }
    if (req.method === 'GET' && url.pathname === '/v1/releases') {
      if (!bearerOk()) {
        res.setHeader('www-authenticate', 'Bearer error="invalid_token"');
        return answer(401, { error: 'invalid_token' });
      }
      const q = url.searchParams;
      const list = releases
        .filter((r) => (!q.get('family') || r.family === q.get('family')) && (!q.get('channel') || r.channel === q.get('channel')))
        .filter((r) => !q.get('architecture') || r.artifacts.some((a) => a.architecture === q.get('architecture') || a.architecture === 'any'))
        .map((r) => ({
          id: r.id,
          family: r.family,
          version: r.version,
          channel: r.channel,
          notes: r.notes ?? '',
          publishedAt: '2026-01-01T00:00:00.000Z',
          artifacts: r.artifacts.map((a) => ({
            architecture: a.architecture,
            kind: a.kind,
            fileName: a.fileName,
            url: `/artifacts/${r.id}/${a.architecture}/${a.fileName}`,
            sizeBytes: a.bytes.length,
            sha256: a.sha256 ?? sha(a.bytes),
            signature: a.signature ?? null,
          })),
        }));
      return answer(200, { releases: list });
    }
    const m = /^\/artifacts\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'GET' && m) {
      if (!bearerOk()) return answer(401, { error: 'invalid_token' });
      const artifact = releases.find((r) => r.id === m[1])?.artifacts.find((a) => a.architecture === m[2] && a.fileName === m[3]);
      if (!artifact) return answer(404, { error: 'not_found' });
      const bytes = artifact.servedBytes ?? artifact.bytes;
      let start = 0;
      const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
      if (range) {
        start = Number(range[1]);
        if (start >= bytes.length) {
          entry.status = 416;
          res.writeHead(416, { 'content-range': `bytes */${bytes.length}` });
          return res.end();
        }
      }
      const body = bytes.subarray(start);
      entry.status = range ? 206 : 200;
      res.writeHead(entry.status, {
        'content-type': 'application/octet-stream',
        'content-length': String(body.length),
        'accept-ranges': 'bytes',
        ...(range ? { 'content-range': `bytes ${start}-${bytes.length - 1}/${bytes.length}` } : {}),
      });
      if (cutAfter !== null && cuts > 0 && cutAfter < body.length) {
        const n = cutAfter;
        if (--cuts === 0) cutAfter = null;
        res.write(body.subarray(0, n), () => setTimeout(() => res.socket?.destroy(), 20));
        return;
      }
      return res.end(body);
    }
    answer(404, { error: 'not_found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  t.teardown(close);
  return {
    url: base,
    requests,
    tokenRequests: () => requests.filter((r) => r.path === '/oauth/token'),
    accessToken,
    get deviceCode() {
      return grant?.deviceCode ?? null;
    },
    get userCode() {
      return grant?.userCode ?? null;
    },
    approve: () => {
      if (grant) grant.state = 'approved';
    },
    deny: () => {
      if (grant) grant.state = 'denied';
    },
    expire: () => {
      if (grant) grant.state = 'expired';
    },
    slowDown: (n = 1) => {
      slowDowns += n;
    },
    cutDownloadsAfter: (n, times = 1) => {
      cutAfter = n;
      cuts = times;
    },
    revokeToken: () => {
      tokenValid = false;
    },
    addRelease: (r) => {
      releases.push(r);
    },
    close,
  };
}
