/** A small keep-alive HTTP client for the simulated players (node:http, gzip understood). */
import http from 'node:http';
import { gunzipSync } from 'node:zlib';

export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** Body bytes as received (before gunzip). */
  wireBytes: number;
}

export class HttpClient {
  readonly agent: http.Agent;
  private readonly host: string;
  private readonly port: number;

  constructor(base: string, maxSockets: number) {
    const u = new URL(base);
    this.host = u.hostname;
    this.port = Number(u.port);
    this.agent = new http.Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets, scheduling: 'fifo' });
  }

  request(method: string, path: string, headers: Record<string, string>, body?: string): Promise<HttpAnswer> {
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: this.host,
          port: this.port,
          method,
          path,
          agent: this.agent,
          headers: body !== undefined ? { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } : headers,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            let data = Buffer.concat(chunks);
            const wireBytes = data.length;
            try {
              if (res.headers['content-encoding'] === 'gzip') data = gunzipSync(data);
            } catch (err) {
              reject(err);
              return;
            }
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: data, wireBytes });
          });
        },
      );
      req.on('error', reject);
      req.setTimeout(60_000, () => req.destroy(new Error('request timed out after 60 s')));
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
