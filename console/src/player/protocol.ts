/**
 * The player protocol (DESIGN.md section 6) as the browser player speaks it: request and
 * response shapes, and a small client over `fetch`. No DOM types here: the pure modules
 * and their unit tests (run in Node) import this file too.
 */

export const PLAYER_VERSION = '0.1.0';

export interface PairingSession {
  id: string;
  code: string;
  pollSecret: string;
  expiresAt: string;
  pollIntervalSec: number;
}

export type PairingStatus = 'pending' | 'approved' | 'rejected' | 'expired' | 'enrolled';

export interface PairingPoll {
  id: string;
  status: PairingStatus;
  enrollmentToken?: string;
}

export interface Enrollment {
  screenId: string;
  credential: string;
}

export interface HeartbeatReply {
  serverTime?: string;
  manifestRevision?: string | number | null;
  heartbeatIntervalSec?: number;
  ignoredFields?: string[];
  noiseHistory?: { accepted: number };
  pendingCommands?: number;
  [key: string]: unknown;
}

export interface PlayerCommand {
  id: string;
  type: string;
  params?: Record<string, unknown> | null;
  payload?: Record<string, unknown> | null;
  expiresAt?: string | null;
  [key: string]: unknown;
}

/** An error answered by the server in the `{"error": {code, message}}` envelope, or a network failure. */
export class PlayerApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly retryAfterSec: number | null;

  constructor(status: number, code: string, message: string, retryAfterSec: number | null = null) {
    super(message);
    this.name = 'PlayerApiError';
    this.status = status;
    this.code = code;
    this.retryAfterSec = retryAfterSec;
  }

  /** The screen's credential no longer works: pair again. */
  get credentialLost(): boolean {
    return this.code === 'credential_revoked' || this.code === 'invalid_credential';
  }

  /** No answer from the server at all (offline, refused, timed out). */
  get network(): boolean {
    return this.status === 0;
  }
}

/** `cache: 'no-store'` (a browser option Node's RequestInit type does not list). */
const NO_STORE = { cache: 'no-store' } as unknown as RequestInit;

type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

export interface ManifestFetch {
  notModified: boolean;
  etag: string | null;
  manifest: unknown;
}

/** A thin client: one method per player route, envelope unwrapped, errors as PlayerApiError. */
export class PlayerApi {
  credential: string | null = null;

  constructor(
    private readonly base: string,
    private readonly fetchImpl: FetchLike = (input, init) => fetch(input, init),
    private readonly timeoutMs = 20_000,
  ) {}

  url(path: string): string {
    return this.base.replace(/\/$/, '') + path;
  }

  private async request(method: string, path: string, options: { body?: unknown; headers?: Record<string, string>; auth?: boolean } = {}): Promise<Response> {
    const headers: Record<string, string> = { accept: 'application/json', ...(options.headers ?? {}) };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (options.auth !== false && this.credential) headers.authorization = `Bearer ${this.credential}`;
    const controller = typeof AbortController === 'function' ? new AbortController() : null;
    const timer = controller ? setTimeout(() => controller.abort(), this.timeoutMs) : null;
    try {
      return await this.fetchImpl(this.url(path), {
        method,
        headers,
        ...NO_STORE,
        ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
        ...(controller ? { signal: controller.signal } : {}),
      });
    } catch (err) {
      throw new PlayerApiError(0, 'network', `The server did not answer: ${(err as Error).message ?? err}`);
    } finally {
      if (timer) clearTimeout(timer);
    }
  }

  private async data<T>(res: Response): Promise<T> {
    if (res.status === 204) return undefined as T;
    let body: any = null;
    try {
      body = await res.json();
    } catch {
      body = null;
    }
    if (!res.ok) throw errorFromBody(res, body);
    return (body && typeof body === 'object' && 'data' in body ? body.data : body) as T;
  }

  async createPairingSession(info: { playerFamily?: string; playerVersion?: string; deviceName?: string }): Promise<PairingSession> {
    return this.data(await this.request('POST', '/api/v1/player/pairing-sessions', { body: info, auth: false }));
  }

  async pollPairingSession(id: string, pollSecret: string): Promise<PairingPoll> {
    return this.data(
      await this.request('GET', `/api/v1/player/pairing-sessions/${encodeURIComponent(id)}`, {
        headers: { 'x-pairing-secret': pollSecret },
        auth: false,
      }),
    );
  }

  async enroll(body: { enrollmentToken: string; playerFamily?: string; playerVersion?: string }): Promise<Enrollment> {
    return this.data(await this.request('POST', '/api/v1/player/enroll', { body, auth: false }));
  }

  async heartbeat(body: Record<string, unknown>): Promise<HeartbeatReply> {
    return this.data(await this.request('POST', '/api/v1/player/heartbeat', { body }));
  }

  async liveness(): Promise<void> {
    await this.data(await this.request('POST', '/api/v1/player/liveness', { body: {} }));
  }

  async manifest(etag: string | null): Promise<ManifestFetch> {
    const res = await this.request('GET', '/api/v1/player/manifest', { headers: etag ? { 'if-none-match': etag } : {} });
    if (res.status === 304) return { notModified: true, etag, manifest: null };
    const manifest = await this.data<unknown>(res);
    return { notModified: false, etag: res.headers.get('etag'), manifest };
  }

  async config(): Promise<PlayerConfig> {
    return this.data(await this.request('GET', '/api/v1/player/config'));
  }

  /** A release offered to this screen (docs/player-updates.md): its metadata and artifact. */
  async updateInfo(releaseId: string): Promise<UpdateInfo> {
    return this.data(await this.request('GET', `/api/v1/player/updates/${encodeURIComponent(releaseId)}`));
  }

  /** Reports how an offered update goes; answers the screen's state in the deployment. */
  async updateStatus(deploymentId: string, body: UpdateStatus): Promise<{ state: string }> {
    return this.data(await this.request('POST', `/api/v1/player/update-deployments/${encodeURIComponent(deploymentId)}/status`, { body }));
  }

  async pendingCommands(): Promise<PlayerCommand[]> {
    const data = await this.data<any>(await this.request('GET', '/api/v1/player/commands'));
    if (Array.isArray(data)) return data;
    if (data && Array.isArray(data.items)) return data.items;
    return [];
  }

  async acknowledgeCommand(id: string): Promise<void> {
    await this.data(await this.request('POST', `/api/v1/player/commands/${encodeURIComponent(id)}/acknowledge`, { body: {} }));
  }

  async commandResult(id: string, result: CommandResult): Promise<void> {
    await this.data(await this.request('POST', `/api/v1/player/commands/${encodeURIComponent(id)}/result`, { body: result }));
  }

  /** GET a media URL from the manifest with the device credential (the caller reads the body). */
  async media(url: string): Promise<Response> {
    const full = /^https?:/i.test(url) ? url : this.url(url);
    const res = await this.fetchImpl(full, {
      headers: this.credential ? { authorization: `Bearer ${this.credential}` } : {},
      ...NO_STORE,
    }).catch((err) => {
      throw new PlayerApiError(0, 'network', `The server did not answer: ${(err as Error).message ?? err}`);
    });
    if (!res.ok) {
      let body: any = null;
      try {
        body = await res.json();
      } catch {
        body = null;
      }
      throw errorFromBody(res, body);
    }
    return res;
  }
}

/** `update` in the manifest and the config: a release offered to this screen. */
export interface UpdateOffer {
  deploymentId: string;
  releaseId: string;
  version: string;
  family: string;
}

/** `webRelease` in the config: the web release this screen installed through a deployment. */
export interface WebReleaseRef {
  releaseId: string;
  version: string;
  path: string;
}

export interface PlayerConfig {
  screenId: string;
  name: string;
  timeZone: string | null;
  heartbeatIntervalSec: number;
  update?: UpdateOffer | null;
  webRelease?: WebReleaseRef | null;
  [key: string]: unknown;
}

export interface UpdateInfo {
  releaseId: string;
  deploymentId: string;
  family: string;
  version: string;
  channel?: string;
  notes?: string;
  artifact?: { architecture: string; kind: string; fileName: string; sizeBytes: number; sha256: string; signature: string | null; url: string };
}

export interface UpdateStatus {
  state: 'downloading' | 'downloaded' | 'installing' | 'installed' | 'failed';
  progress?: number;
  version?: string;
  error?: string;
}

export interface CommandResult {
  status: 'succeeded' | 'failed';
  message?: string;
  output?: Record<string, unknown>;
  /** Only for a screenshot command: the image, base64. */
  screenshot?: { contentType: 'image/png' | 'image/jpeg' | 'image/webp'; dataBase64: string };
}

function errorFromBody(res: Response, body: any): PlayerApiError {
  const retry = Number(res.headers.get('retry-after'));
  const code = typeof body?.error?.code === 'string' ? body.error.code : `http_${res.status}`;
  const message = typeof body?.error?.message === 'string' ? body.error.message : `HTTP ${res.status}`;
  return new PlayerApiError(res.status, code, message, Number.isFinite(retry) && retry > 0 ? retry : null);
}
