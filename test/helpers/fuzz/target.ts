import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/**
 * The server under test: the real server (server/src/main.ts) as a child process over a
 * data directory, so a request that kills it is seen as a crash (and the run goes on
 * after a restart over the same data) instead of taking the test down with it. Responses
 * are checked against their declarations inside the server (PLACARD_VALIDATE_RESPONSES);
 * its error log lines are kept by request id so a finding can say why.
 */
export class FuzzTarget {
  url = '';
  child: ChildProcess | null = null;
  crashes = 0;
  private out = '';
  /** Error/warn log lines by request id (bounded). */
  private readonly logs = new Map<string, string[]>();
  private exitInfo: string | null = null;

  constructor(
    readonly dataDir: string,
    private readonly env: Record<string, string> = {},
  ) {}

  async start(): Promise<void> {
    this.exitInfo = null;
    this.out = '';
    const child = spawn(process.execPath, ['--import=tsx', path.join(ROOT, 'server/src/main.ts')], {
      cwd: ROOT,
      env: {
        ...process.env,
        PLACARD_DATA_DIR: this.dataDir,
        PLACARD_PORT: '0',
        PLACARD_HTTPS_PORT: '0',
        PLACARD_HOST: '127.0.0.1',
        PLACARD_LOG_LEVEL: 'info',
        PLACARD_VALIDATE_RESPONSES: '1',
        ...this.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    let pending = '';
    const onLine = (line: string) => {
      if (!this.url) this.out += `${line}\n`;
      if (!line.includes('"level":50') && !line.includes('"level":40') && !line.includes('"level":60')) return;
      try {
        const entry = JSON.parse(line) as { reqId?: string; msg?: string; err?: { message?: string; stack?: string } };
        const id = entry.reqId ?? '-';
        const list = this.logs.get(id) ?? [];
        if (list.length < 5) list.push(`${entry.msg ?? ''}${entry.err?.message ? `: ${entry.err.message}` : ''}`);
        this.logs.set(id, list);
        if (this.logs.size > 5_000) this.logs.delete(this.logs.keys().next().value!);
      } catch {
        /* not JSON */
      }
    };
    child.stdout!.on('data', (chunk: Buffer) => {
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop()!;
      for (const l of lines) onLine(l);
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      this.out += text;
      if (this.out.length > 200_000) this.out = this.out.slice(-100_000);
    });
    child.once('exit', (code, signal) => {
      this.exitInfo = `exited with ${code ?? signal}: ${this.out.slice(-3000)}`;
    });
    const started = Date.now();
    for (;;) {
      const m = /"url":"(http:\/\/[^"]+)"/.exec(this.out);
      if (m) {
        this.url = m[1]!;
        return;
      }
      if (this.exitInfo) throw new Error(`the server did not start: ${this.exitInfo}`);
      if (Date.now() - started > 90_000) throw new Error(`the server did not start within 90 s:\n${this.out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  get alive(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Why the process ended (its last output), or null while it runs. */
  get exited(): string | null {
    return this.exitInfo;
  }

  logsFor(requestId: string): string[] {
    return this.logs.get(requestId) ?? [];
  }

  /** Restarts after a crash, over the same data directory. */
  async restart(): Promise<void> {
    this.crashes++;
    this.url = '';
    await this.start();
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || !this.alive) return;
    const done = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await done;
    clearTimeout(timer);
  }
}

export interface FuzzRequest {
  method: string;
  /** Path and query, already encoded. */
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** The loopback source address (127.x.y.z): spreads per-address throttling. */
  localAddress?: string;
  /** Send as raw bytes over a socket (headers the HTTP client would refuse). */
  raw?: boolean;
}

export interface FuzzResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  ms: number;
}

export type SendOutcome = { ok: true; res: FuzzResponse } | { ok: false; error: 'timeout' | 'refused' | 'reset' | 'other'; detail: string; ms: number };

const MAX_BODY = 64 * 1024 * 1024;

/** Sends one request with a deadline; answers the response or what went wrong. */
export function send(baseUrl: string, req: FuzzRequest, deadlineMs: number): Promise<SendOutcome> {
  const url = new URL(baseUrl);
  const started = Date.now();
  if (req.raw) return sendRaw(url, req, deadlineMs, started);
  return new Promise((resolve) => {
    let settled = false;
    const finish = (o: SendOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(o);
    };
    let r: http.ClientRequest;
    try {
      r = http.request({
        host: url.hostname,
        port: url.port,
        method: req.method,
        path: req.path,
        headers: req.headers,
        agent: false,
        localAddress: req.localAddress,
        insecureHTTPParser: true,
      });
    } catch {
      // A header value Node refuses to send: send it raw instead.
      return resolve(sendRaw(url, req, deadlineMs, started));
    }
    const timer = setTimeout(() => {
      r.destroy();
      finish({ ok: false, error: 'timeout', detail: `no complete answer within ${deadlineMs} ms`, ms: Date.now() - started });
    }, deadlineMs);
    r.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size <= MAX_BODY) chunks.push(c);
      });
      res.on('end', () => {
        let body = Buffer.concat(chunks);
        // Read as a client would: a gzip answer (the manifest to a client that accepts it) is
        // checked decoded; one that does not decode is checked as it came (and fails as not JSON).
        if (res.headers['content-encoding'] === 'gzip' && size <= MAX_BODY) {
          try {
            body = gunzipSync(body);
          } catch {
            /* checked as sent */
          }
        }
        finish({ ok: true, res: { status: res.statusCode ?? 0, headers: res.headers, body, ms: Date.now() - started } });
      });
      res.on('error', (err) => finish({ ok: false, error: 'reset', detail: err.message, ms: Date.now() - started }));
    });
    r.on('error', (err: NodeJS.ErrnoException) => {
      const error = err.code === 'ECONNREFUSED' ? 'refused' : err.code === 'ECONNRESET' || err.code === 'EPIPE' ? 'reset' : 'other';
      finish({ ok: false, error, detail: `${err.code ?? ''} ${err.message}`, ms: Date.now() - started });
    });
    if (req.body) r.end(req.body);
    else r.end();
  });
}

/** The request as bytes on a socket: no client-side header checks. Answers status and headers; the body is read to the end. */
function sendRaw(url: URL, req: FuzzRequest, deadlineMs: number, started: number): Promise<SendOutcome> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: url.hostname, port: Number(url.port), localAddress: req.localAddress });
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (o: SendOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(o);
    };
    const timer = setTimeout(
      () => finish({ ok: false, error: 'timeout', detail: `no complete answer within ${deadlineMs} ms`, ms: Date.now() - started }),
      deadlineMs,
    );
    socket.on('connect', () => {
      const lines = [`${req.method} ${req.path} HTTP/1.1`, `Host: ${url.host}`, 'Connection: close'];
      const headers = { ...req.headers };
      if (req.body && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-length' || h.toLowerCase() === 'transfer-encoding')) {
        headers['content-length'] = String(req.body.length);
      }
      for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
      socket.write(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), req.body ?? Buffer.alloc(0)]));
    });
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (chunks.length) return;
      finish({ ok: false, error: err.code === 'ECONNREFUSED' ? 'refused' : 'reset', detail: `${err.code ?? ''} ${err.message}`, ms: Date.now() - started });
    });
    socket.on('close', () => {
      const all = Buffer.concat(chunks);
      const headEnd = all.indexOf('\r\n\r\n');
      if (headEnd < 0)
        return finish({ ok: false, error: 'reset', detail: `the connection closed without an answer (${all.length} bytes)`, ms: Date.now() - started });
      const head = all.subarray(0, headEnd).toString('latin1').split('\r\n');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head[0] ?? '')?.[1] ?? 0);
      const headers: http.IncomingHttpHeaders = {};
      for (const line of head.slice(1)) {
        const i = line.indexOf(':');
        if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      let body: Buffer = all.subarray(headEnd + 4);
      if (/chunked/i.test(String(headers['transfer-encoding'] ?? ''))) body = dechunk(body);
      finish({ ok: true, res: { status, headers, body, ms: Date.now() - started } });
    });
  });
}

function dechunk(buf: Buffer): Buffer {
  const out: Buffer[] = [];
  let i = 0;
  while (i < buf.length) {
    const lineEnd = buf.indexOf('\r\n', i);
    if (lineEnd < 0) break;
    const size = parseInt(buf.subarray(i, lineEnd).toString('latin1'), 16);
    if (!size) break;
    out.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size));
    i = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(out);
}
