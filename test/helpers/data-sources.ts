import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';
import type { SignedIn } from './auth.js';
import type { TestApp } from './harness.js';

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

export interface FakeFeed {
  url: string;
  /** path -> handler; change it while the test runs. */
  routes: Map<string, Handler>;
  /** Every request: path and headers. */
  requests: { path: string; headers: http.IncomingHttpHeaders }[];
}

/** A local fake feed server (JSON documents, slow answers, redirects...). */
export async function fakeFeed(t: Test, routes: Record<string, Handler> = {}): Promise<FakeFeed> {
  const table = new Map(Object.entries(routes));
  const requests: FakeFeed['requests'] = [];
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    requests.push({ path, headers: req.headers });
    const handler = table.get(path);
    if (handler) handler(req, res);
    else res.writeHead(404).end('nope');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, routes: table, requests };
}

/** Answers a JSON document, with an ETag when given (and 304 to a matching If-None-Match). */
export function jsonDoc(doc: unknown, etag?: string): Handler {
  return (req, res) => {
    if (etag && req.headers['if-none-match'] === etag) return res.writeHead(304, { etag }).end();
    res.writeHead(200, { 'content-type': 'application/json', ...(etag ? { etag } : {}) }).end(JSON.stringify(doc));
  };
}

export async function createSource(app: TestApp, who: SignedIn, body: Record<string, unknown>) {
  return app.json('/api/v1/data-sources', { method: 'POST', headers: who.headers, json: body });
}

/** Makes the source due now and runs the refresh task once (the real periodic path). */
export async function refreshNow(app: TestApp, ...ids: string[]): Promise<void> {
  await app.deps.db
    .updateTable('data_source_fetch_state')
    .set({ next_fetch_at: new Date(Date.now() - 1000).toISOString() })
    .where('source_id', 'in', ids)
    .execute();
  await app.deps.periodic.runNow('data-sources.refresh');
}

export async function diagnosticsOf(app: TestApp, who: SignedIn, id: string) {
  const res = await app.json(`/api/v1/data-sources/${id}/diagnostics`, { headers: who.headers });
  if (res.status !== 200) throw new Error(`diagnostics answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data;
}
