import { deflateSync } from 'node:zlib';
import type { Rng } from './rng.js';
import { send, type FuzzRequest, type FuzzResponse, type FuzzTarget } from './target.js';

/**
 * What the fuzzer knows about the server: the principals it signs in as (each role, a
 * device, integration tokens, disposable "victims" for routes that end their caller's
 * session or credential), and pools of ids and values harvested from every answer, so
 * generated requests name things that exist.
 */

export const FUZZ_PASSWORD = 'Fuzz-owner-password-1';

export interface SessionCred {
  kind: 'session';
  email: string;
  password: string;
  role: string;
  userId: string;
  cookie: string;
  csrf: string;
}

export interface BearerCred {
  kind: 'bearer';
  token: string;
  /** Screen or token id (kept out of destructive requests). */
  id: string;
}

/** A loopback source address of its own for bookkeeping (sign-ins), away from throttled fuzz traffic. */
let bookkeepingAddress = 0;
export function freshAddress(): string {
  bookkeepingAddress++;
  return `127.0.${200 + ((bookkeepingAddress >> 8) % 50)}.${(bookkeepingAddress % 254) + 1}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Singular-insensitive resource names with aliases: `groupIds` and `/screen-groups/{id}` share a pool. */
export function resourceKey(name: string): string {
  let n = name
    .replace(/Ids?$/, '')
    .replace(/_ids?$/, '')
    .toLowerCase();
  const aliases: Record<string, string> = {
    group: 'screen-groups',
    groups: 'screen-groups',
    'screen-group': 'screen-groups',
    folder: 'content-folders',
    folders: 'content-folders',
    parent: 'content-folders',
    collection: 'content-collections',
    collections: 'content-collections',
    tag: 'content-tags',
    tags: 'content-tags',
    pairing: 'pairing-sessions',
    'pairing-session': 'pairing-sessions',
    session: 'pairing-sessions',
    maintenance: 'actions',
    action: 'actions',
    item: 'items',
    run: 'runs',
    user: 'users',
    token: 'integration-tokens',
    'integration-token': 'integration-tokens',
    'span-panel': 'span-panels',
    panel: 'span-panels',
  };
  if (aliases[n]) return aliases[n]!;
  if (!n.endsWith('s')) n += 's';
  return aliases[n] ?? n;
}

/** The resource a path answers about: its last literal segment (`/playlists/{id}/items` -> items). */
export function resourceOfPath(path: string): string {
  // Maintenance actions answer runs.
  if (path === '/api/v1/system/maintenance/{action}') return 'runs';
  const segs = path.split('/').filter(Boolean);
  for (let i = segs.length - 1; i >= 0; i--) {
    const s = segs[i]!;
    if (!s.startsWith('{') && !/^(v1|api|preview|resolve|bulk|order|status|options|export)$/.test(s)) return resourceKey(s);
  }
  return 'unknown';
}

export class Pools {
  private readonly ids = new Map<string, Set<string>>();
  private readonly strings = new Map<string, Set<string>>();
  /** Ids destructive requests must not name (the fuzzer's own principals). */
  readonly protectedIds = new Set<string>();

  addId(resource: string, id: string): void {
    if (!UUID.test(id)) return;
    const key = resourceKey(resource);
    let set = this.ids.get(key);
    if (!set) this.ids.set(key, (set = new Set()));
    if (set.size > 200) set.delete(set.values().next().value!);
    set.add(id.toLowerCase());
  }

  addString(name: string, value: string): void {
    let set = this.strings.get(name);
    if (!set) this.strings.set(name, (set = new Set()));
    if (set.size > 50) set.delete(set.values().next().value!);
    set.add(value);
  }

  idFor(resource: string, rng: Rng, destructive: boolean): string | undefined {
    const set = this.ids.get(resourceKey(resource));
    let all = set ? [...set] : [];
    if (destructive) all = all.filter((id) => !this.protectedIds.has(id));
    if (all.length === 0) {
      // Any id the server issued, of whatever kind (a valid-looking request to the wrong resource).
      const any = [...this.ids.values()].flatMap((s) => [...s]).filter((id) => !destructive || !this.protectedIds.has(id));
      return any.length ? rng.pick(any) : undefined;
    }
    return rng.pick(all);
  }

  stringFor(name: string, rng: Rng): string | undefined {
    const set = this.strings.get(name);
    return set?.size ? rng.pick([...set]) : undefined;
  }

  /** Every id and value worth remembering in an answer of `path`. */
  harvest(path: string, data: unknown): void {
    const top = resourceOfPath(path);
    const walk = (value: unknown, resource: string, depth: number) => {
      if (depth > 6 || value === null || typeof value !== 'object') return;
      if (Array.isArray(value)) {
        for (const v of value.slice(0, 100)) walk(v, resource, depth + 1);
        return;
      }
      const obj = value as Record<string, unknown>;
      if (typeof obj.id === 'string') this.addId(resource, obj.id);
      for (const [k, v] of Object.entries(obj)) {
        if (typeof v === 'string') {
          if (/Id$/.test(k)) this.addId(k, v);
          if (/^(code|pollSecret|enrollmentToken|name|revision|etag)$/.test(k) && v.length < 200) this.addString(`${resource}.${k}`, v);
          if (k === 'name' && resource === 'backups') this.addString('backups', v);
          if (k === 'name' && resource === 'actions') this.addString('actions', v);
        } else if (typeof v === 'number' && k === 'revision') {
          this.addString('revision', String(v));
        } else if (Array.isArray(v) && /Ids$/.test(k)) {
          for (const id of v) if (typeof id === 'string') this.addId(k, id);
        } else if (Array.isArray(v) || (v && typeof v === 'object')) {
          walk(
            v,
            k === 'items' || k === 'data' || k === 'user' || k === 'screen' || k === 'run'
              ? k === 'user'
                ? 'users'
                : k === 'screen'
                  ? 'screens'
                  : k === 'run'
                    ? 'runs'
                    : resource
              : k === 'actions'
                ? 'actions'
                : resourceKey(k),
            depth + 1,
          );
        }
      }
    };
    walk(data, top, 0);
  }
}

export interface Principals {
  owner: SessionCred;
  roles: Record<'admin' | 'publisher' | 'editor' | 'viewer', SessionCred>;
  /** An owner-role user for requests that end or change their caller's own session. */
  victim: SessionCred;
  device: BearerCred;
  /** A second screen's credential (revoked, disabled... by the fuzz: replaced when needed). */
  victimDevice: BearerCred;
  integration: BearerCred;
  integrationFleetOnly: BearerCred;
}

export interface Api {
  call(
    method: string,
    path: string,
    init?: { json?: unknown; headers?: Record<string, string>; body?: Buffer; localAddress?: string },
  ): Promise<FuzzResponse & { json: any }>;
}

export function apiOf(target: FuzzTarget): Api {
  return {
    async call(method, path, init = {}) {
      const headers: Record<string, string> = { ...init.headers };
      let body = init.body;
      if (init.json !== undefined) {
        headers['content-type'] = 'application/json';
        body = Buffer.from(JSON.stringify(init.json));
      }
      const req: FuzzRequest = { method, path, headers, body, localAddress: init.localAddress };
      for (let attempt = 0; ; attempt++) {
        const out = await send(target.url, req, 120_000);
        if (out.ok) {
          let json: any = null;
          try {
            json = out.res.body.length ? JSON.parse(out.res.body.toString()) : null;
          } catch {
            json = null;
          }
          // A restore in progress answers 503 for a while: wait it out.
          if (out.res.status === 503 && attempt < 120) {
            await new Promise((r) => setTimeout(r, 1000));
            continue;
          }
          return { ...out.res, json };
        }
        if (attempt >= 2) throw new Error(`${method} ${path}: ${out.error} ${out.detail}`);
        await new Promise((r) => setTimeout(r, 500));
      }
    },
  };
}

function cookieOf(res: FuzzResponse, previous = ''): string {
  const jar = new Map<string, string>();
  for (const pair of previous.split(/;\s*/).filter(Boolean)) {
    const i = pair.indexOf('=');
    jar.set(pair.slice(0, i), pair.slice(i + 1));
  }
  const set = res.headers['set-cookie'] ?? [];
  for (const c of set) {
    const [pair] = c.split(';');
    const i = pair!.indexOf('=');
    const name = pair!.slice(0, i);
    const value = pair!.slice(i + 1);
    if (value === '' || /expires=Thu, 01 Jan 1970/i.test(c)) jar.delete(name);
    else jar.set(name, value);
  }
  return [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
}

export function sessionHeaders(s: SessionCred): Record<string, string> {
  return { cookie: s.cookie, 'x-csrf-token': s.csrf };
}

async function expectOk(what: string, res: { status: number; json: any; body: Buffer }, ...statuses: number[]) {
  if (!statuses.includes(res.status)) throw new Error(`fuzz setup: ${what} answered ${res.status}: ${res.body.toString().slice(0, 500)}`);
  return res.json;
}

export async function login(api: Api, email: string, password: string, role: string): Promise<SessionCred> {
  const res = await api.call('POST', '/api/v1/auth/login', { json: { email, password }, localAddress: freshAddress() });
  const body = await expectOk(`login ${email}`, res, 200);
  return { kind: 'session', email, password, role, userId: body.data.user.id, cookie: cookieOf(res), csrf: body.data.csrfToken };
}

let userCounter = 0;
export async function createUser(api: Api, owner: SessionCred, role: string): Promise<SessionCred> {
  const email = `fuzz-${role}-${++userCounter}-${Date.now()}@example.test`;
  const res = await api.call('POST', '/api/v1/users', {
    headers: sessionHeaders(owner),
    json: { email, displayName: `Fuzz ${role}`, role, password: FUZZ_PASSWORD },
  });
  await expectOk(`create ${role}`, res, 201);
  return login(api, email, FUZZ_PASSWORD, role);
}

/** Pairs and enrols a screen through the protocol; answers its credential. */
export async function pairScreen(api: Api, admin: SessionCred, name: string): Promise<BearerCred> {
  const started = await expectOk(
    'pairing-sessions',
    await api.call('POST', '/api/v1/player/pairing-sessions', {
      json: { playerFamily: 'desktop-linux', playerVersion: '1.0.0', deviceName: name },
      localAddress: freshAddress(),
    }),
    201,
  );
  const { id, code, pollSecret } = started.data;
  await expectOk(
    'resolve',
    await api.call('POST', '/api/v1/screens/pairing/resolve', { headers: sessionHeaders(admin), json: { code }, localAddress: freshAddress() }),
    200,
  );
  await expectOk('approve', await api.call('POST', `/api/v1/screens/pairing/${id}/approve`, { headers: sessionHeaders(admin), json: { name } }), 200);
  const polled = await expectOk('poll', await api.call('GET', `/api/v1/player/pairing-sessions/${id}`, { headers: { 'x-pairing-secret': pollSecret } }), 200);
  const enrolled = await expectOk(
    'enroll',
    await api.call('POST', '/api/v1/player/enroll', { json: { enrollmentToken: polled.data.enrollmentToken }, localAddress: freshAddress() }),
    201,
  );
  return { kind: 'bearer', token: enrolled.data.credential, id: enrolled.data.screenId };
}

export async function makeToken(api: Api, owner: SessionCred, capabilities: string[]): Promise<BearerCred> {
  const made = await expectOk(
    'integration token',
    await api.call('POST', '/api/v1/integration-tokens', { headers: sessionHeaders(owner), json: { name: `fuzz ${capabilities.join('+')}`, capabilities } }),
    201,
  );
  return { kind: 'bearer', token: made.data.token, id: made.data.id };
}

const TUS = { 'tus-resumable': '1.0.0' };

/** tus creation and one PATCH of `bytes`; `complete` makes it an asset. Answers the upload id (and the asset when completed). */
export async function upload(api: Api, who: SessionCred, bytes: Buffer, filename: string, complete: boolean): Promise<{ uploadId: string; asset?: any }> {
  const meta = `filename ${Buffer.from(filename).toString('base64')}`;
  const created = await api.call('POST', '/api/v1/uploads', {
    headers: { ...sessionHeaders(who), ...TUS, 'upload-length': String(bytes.length), 'upload-metadata': meta },
  });
  await expectOk('tus creation', created, 201);
  const location = String(created.headers.location);
  const uploadId = location.split('/').pop()!;
  const half = complete ? bytes : bytes.subarray(0, Math.floor(bytes.length / 2));
  const patched = await api.call('PATCH', location, {
    headers: { ...sessionHeaders(who), ...TUS, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
    body: half,
  });
  await expectOk('tus PATCH', patched, 204);
  if (!complete) return { uploadId };
  const done = await expectOk('complete', await api.call('POST', `/api/v1/uploads/${uploadId}/complete`, { headers: sessionHeaders(who), json: {} }), 201);
  return { uploadId, asset: done.data };
}

/** A small PNG, made without any image library: one 8x8 RGB picture. */
export function tinyPng(rng?: Rng): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf: Buffer) => {
    let c = 0xffffffff;
    for (const b of buf) c = crcTable[(c ^ b) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const c = Buffer.alloc(4);
    c.writeUInt32BE(crc(td));
    return Buffer.concat([len, td, c]);
  };
  const w = 8;
  const h = 8;
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8;
  ihdr[9] = 2;
  const raw = Buffer.alloc((w * 3 + 1) * h);
  const color = rng ? [rng.int(0, 255), rng.int(0, 255), rng.int(0, 255)] : [200, 30, 40];
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) raw.set(color, y * (w * 3 + 1) + 1 + x * 3);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
