import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { REFUSED, WORST_ALLOWED, worstRecurrence } from './recurrence.js';
import { Rng } from './rng.js';
import { deref, hostileBody, hostileValue, RawJson, toJsonText, validValue, type GenContext } from './schema-gen.js';
import {
  apiOf,
  createUser,
  freshAddress,
  login,
  makeToken,
  pairScreen,
  Pools,
  resourceKey,
  sessionHeaders,
  tinyPng,
  upload,
  type Api,
  type BearerCred,
  type Principals,
  type SessionCred,
} from './state.js';
import { FuzzTarget, send, type FuzzRequest, type FuzzResponse } from './target.js';

/**
 * The project's own fuzzer, driven by the served OpenAPI document: for every operation,
 * valid and hostile requests with every kind of credential, checked against what the
 * document says the operation answers. See docs/api-conventions.md ("Fuzzing").
 */

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export interface FuzzOptions {
  seed: number;
  requests: number;
  /** Requests in flight at once. */
  concurrency?: number;
  /** A request without a complete answer after this long is a hang. */
  deadlineMs?: number;
  /** Progress lines (every `progressEvery` requests). */
  log?: (line: string) => void;
  progressEvery?: number;
  /** Keep the data directory (for a look after a failed run). */
  keepData?: boolean;
}

export type FindingKind =
  | 'crash'
  | 'hang'
  | '5xx'
  /** The server's own response check (PLACARD_VALIDATE_RESPONSES) refused an answer its route does not declare. */
  | 'undeclared'
  | 'undocumented-status'
  | 'schema'
  | 'error-code'
  | 'content-type'
  | 'request-id'
  | 'allow'
  | 'not-ready-after';

export interface Finding {
  kind: FindingKind;
  /** "METHOD /path" of the document's operation (or the path for method checks). */
  op: string;
  status: number | null;
  detail: string;
  request: string;
  response: string;
  serverLog: string[];
}

export interface FuzzReport {
  seed: number;
  requests: number;
  byStatus: Record<string, number>;
  byMode: Record<string, number>;
  operations: number;
  operationsReached: number;
  /** Operations that answered at least one 2xx. */
  operationsSucceeded: number;
  crashes: number;
  hangs: number;
  serverErrors: number;
  undocumented: number;
  findings: Finding[];
  parserRejected: number;
  durationMs: number;
  readyAfter: boolean;
}

interface Param {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: any;
}

export interface Operation {
  key: string;
  method: string;
  path: string;
  params: Param[];
  bodySchema: any | null;
  bodyTypes: string[];
  auth: string[];
  minRole: string | null;
  responses: Record<string, any>;
}

const ROLE_ORDER = ['owner', 'admin', 'publisher', 'editor', 'viewer'];
const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Operations of the document, with their parameters, body and auth. */
export function operationsOf(doc: any): Operation[] {
  const ops: Operation[] = [];
  for (const [p, item] of Object.entries<any>(doc.paths)) {
    for (const [m, op] of Object.entries<any>(item)) {
      if (!['get', 'head', 'post', 'put', 'patch', 'delete', 'options'].includes(m)) continue;
      const content = op.requestBody?.content ?? {};
      const json = content['application/json'];
      ops.push({
        key: `${m.toUpperCase()} ${p}`,
        method: m.toUpperCase(),
        path: p,
        params: (op.parameters ?? []).map((x: any) => ({ name: x.name, in: x.in, required: Boolean(x.required), schema: x.schema ?? {} })),
        bodySchema: json ? (json.schema ?? {}) : null,
        bodyTypes: Object.keys(content),
        auth: op['x-placard-auth'] ?? ['public'],
        minRole: op['x-placard-min-role'] ?? null,
        responses: op.responses ?? {},
      });
    }
  }
  return ops;
}

/**
 * Operations that end or change their caller's own session (sign-in rotates it, logout
 * ends it, MFA changes what the next sign-in needs): sent with the disposable victim's
 * session, never the owner's.
 */
const SELF_DESTRUCTIVE = /^(POST|PUT|PATCH|DELETE) \/api\/v1\/(auth|me)\//;

/** Valid bodies the schema alone rarely yields (cross-field rules, references): half of the valid requests use them. */
const HINTS: Record<string, (pools: Pools, rng: Rng) => unknown> = {
  'POST /api/v1/schedules': (pools, rng) => {
    const playlistId = pools.idFor('playlists', rng, false);
    const screenId = pools.idFor('screens', rng, false);
    if (!playlistId || !screenId) return undefined;
    const start = Date.now() + rng.int(-2, 5) * 86_400_000;
    const recurring = rng.chance(0.5);
    return {
      name: `fuzz schedule ${rng.hex(4)}`,
      content: { playlistId },
      targets: rng.chance(0.5) ? { screenIds: [screenId] } : { groupIds: [pools.idFor('screen-groups', rng, false) ?? screenId] },
      startsAt: new Date(start).toISOString(),
      endsAt: new Date(start + rng.int(1, 8) * 3_600_000).toISOString(),
      ...(recurring ? { rrule: rng.pick(['FREQ=DAILY', 'FREQ=WEEKLY;BYDAY=MO,TU', 'FREQ=DAILY;COUNT=10']) } : {}),
      // Now and then the worst recurrences there are (issue 15): the densest and rarest rules
      // the checks allow, from years ago, and ones they must refuse (finer than daily, huge
      // COUNT, never occurring); the manifests and previews that follow must stay prompt.
      ...(rng.chance(0.3) ? worstRecurrence(rng) : {}),
      priority: rng.int(-5, 5),
    };
  },
  'PATCH /api/v1/schedules/{id}': (_pools, rng) =>
    rng.chance(0.5) ? worstRecurrence(rng) : { rrule: rng.pick([...WORST_ALLOWED.map((w) => w.rrule), ...REFUSED]) },
  'POST /api/v1/playlists/{id}/items': (pools, rng) => {
    const assetId = pools.idFor('assets', rng, false);
    return assetId ? { assetId, ...(rng.chance(0.5) ? { durationMs: rng.int(1000, 20_000) } : {}) } : undefined;
  },
  'POST /api/v1/schedules/preview': (pools, rng) => {
    const from = Date.now() + rng.int(-1, 3) * 86_400_000;
    const screenId = pools.idFor('screens', rng, false);
    // Sometimes the longest preview there is: 62 days.
    const hours = rng.chance(0.3) ? 62 * 24 : rng.int(1, 72);
    return screenId ? { screenId, from: new Date(from).toISOString(), to: new Date(from + hours * 3_600_000).toISOString() } : undefined;
  },
  // Data sources (issue 17): a config its provider takes (the body's config is free-form JSON).
  'POST /api/v1/data-sources': (_pools, rng) =>
    rng.chance(0.5)
      ? {
          name: `fuzz table ${rng.hex(4)}`,
          provider: 'manual-table',
          config: {
            columns: [
              { name: 'Dish', type: 'text' },
              { name: 'Price', type: 'number' },
            ],
          },
          rows: [{ Dish: 'Soup', Price: rng.int(1, 20) }],
        }
      : { name: `fuzz feed ${rng.hex(4)}`, provider: 'json', config: { url: 'https://example.com/feed.json', rowsPath: '$.items[*]' } },
  'PATCH /api/v1/data-sources/{id}': (_pools, rng) => rng.pick([{ name: `fuzz ${rng.hex(4)}` }, { rows: [] }, { refreshIntervalSec: rng.int(30, 4000) }]),
  'POST /api/v1/data-sources/{provider}/preview': (_pools, rng) => ({ config: { url: 'https://example.com/feed.json' }, limit: rng.int(1, 50) }),
  'POST /api/v1/data-sources/{provider}/inspect': () => ({ config: { url: 'https://example.com/feed.json' } }),
  'PUT /api/v1/data-sources/{id}/access/{userId}': (_pools, rng) => ({ level: rng.pick(['viewer', 'editor', 'owner', null]) }),
  'POST /api/v1/screens/{id}/commands': (_pools, rng) => ({ type: rng.pick(['reload', 'screenshot', 'clear-cache', 'display-off', 'display-on', 'reboot']) }),
  'POST /api/v1/system/maintenance/{action}': (pools, rng) =>
    rng.chance(0.5) ? { wait: rng.chance(0.5) } : { options: { backup: pools.stringFor('backups', rng) ?? 'x' } },
};

/** Headers worth varying on every operation. */
function hostileHeaders(rng: Rng): Record<string, string> {
  return rng.pick<() => Record<string, string>>([
    () => ({ 'if-match': rng.pick(['', '*', '"', 'W/"1"', '"1"', '1', 'abc', '"99999999999999999999"', '-1', '"1", "2"', '\u00ff'.repeat(10)]) }),
    () => ({ 'if-none-match': rng.pick(['*', '"x"', 'W/"x"', '', '"'.repeat(100)]) }),
    () => ({
      range: rng.pick([
        'bytes=0-0',
        'bytes=-1',
        'bytes=0-',
        'bytes=999999999-',
        'bytes=5-1',
        'bytes=0-1,2-3',
        'bytes=-0',
        'items=0-1',
        'bytes=abc',
        `bytes=${'9'.repeat(40)}-`,
      ]),
    }),
    () => ({ 'if-range': rng.pick(['"x"', 'W/"x"', 'Tue, 01 Jan 1980 00:00:00 GMT', 'garbage']) }),
    () => ({ 'x-request-id': rng.pick(['', 'a'.repeat(500), 'with space', '\u00e9t\u00e9']) }),
    () => ({ accept: rng.pick(['text/html', 'application/xml', '*/*;q=0', '']) }),
    () => ({ 'accept-encoding': rng.pick(['gzip', 'br', 'identity;q=0', 'x-unknown', '*;q=0']) }),
    () => ({
      'tus-resumable': rng.pick(['0.2.2', '', '1.0.0', '2']),
      'upload-length': rng.pick(['-1', '1e3', '99999999999999999999', '0', '10', 'abc']),
      'upload-offset': rng.pick(['-1', '0', '5', 'x']),
    }),
    () => ({
      'upload-metadata': rng.pick(['filename', 'filename !!!', 'a b c', `folderId ${Buffer.from('not-a-uuid').toString('base64')}`, ',,,', 'x '.repeat(1000)]),
      'tus-resumable': '1.0.0',
      'upload-length': '10',
    }),
    () => ({ 'upload-checksum': rng.pick(['sha1 ', 'crc32 AAAA', 'sha256 !!!', `md5 ${'A'.repeat(24)}`, 'sha1']) }),
    () => ({ 'x-pairing-secret': rng.pick(['', 'x', 'a'.repeat(300)]) }),
    () => ({ 'x-forwarded-for': '10.0.0.1', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example' }),
    () => ({ host: rng.pick(['evil.example', '', 'a'.repeat(300)]) }),
    () => ({ cookie: rng.pick(['placard.sid=x; placard.sid.sig=y', 'a=b', '=;=;', `placard.sid=${'x'.repeat(5000)}`]) }),
    () => ({ 'x-csrf-token': rng.pick(['', 'x', 'a'.repeat(1000)]) }),
  ])();
}

type CredChoice =
  | 'none'
  | 'owner'
  | 'owner-no-csrf'
  | 'owner-bad-csrf'
  | 'admin'
  | 'publisher'
  | 'editor'
  | 'viewer'
  | 'victim'
  | 'device'
  | 'victim-device'
  | 'device-unknown'
  | 'integration'
  | 'integration-fleet'
  | 'integration-unknown'
  | 'bearer-malformed'
  | 'basic'
  | 'cookie-garbage'
  | 'session-and-bearer';

const ALL_CREDS: CredChoice[] = [
  'none',
  'owner',
  'owner-no-csrf',
  'owner-bad-csrf',
  'admin',
  'publisher',
  'editor',
  'viewer',
  'device',
  'device-unknown',
  'integration',
  'integration-fleet',
  'integration-unknown',
  'bearer-malformed',
  'basic',
  'cookie-garbage',
  'session-and-bearer',
];

function credHeaders(p: Principals, c: CredChoice, rng: Rng): Record<string, string> {
  const s = (cred: SessionCred) => sessionHeaders(cred);
  const b = (cred: BearerCred) => ({ authorization: `Bearer ${cred.token}` });
  switch (c) {
    case 'none':
      return {};
    case 'owner':
      return s(p.owner);
    case 'owner-no-csrf':
      return { cookie: p.owner.cookie };
    case 'owner-bad-csrf':
      return { cookie: p.owner.cookie, 'x-csrf-token': `${p.owner.csrf.slice(0, -2)}xx` };
    case 'admin':
    case 'publisher':
    case 'editor':
    case 'viewer':
      return s(p.roles[c]);
    case 'victim':
      return s(p.victim);
    case 'device':
      return b(p.device);
    case 'victim-device':
      return b(p.victimDevice);
    case 'device-unknown':
      return { authorization: `Bearer svc_device_${rng.hex(16)}.${rng.hex(43)}` };
    case 'integration':
      return b(p.integration);
    case 'integration-fleet':
      return b(p.integrationFleetOnly);
    case 'integration-unknown':
      return { authorization: `Bearer ${p.integration.token.replace(/\.[^.]+$/, `.${rng.hex(43)}`)}` };
    case 'bearer-malformed':
      return {
        authorization: rng.pick([
          'Bearer',
          'Bearer ',
          'Bearer svc_device_',
          'Bearer svci_.',
          'bearer  x  y',
          'Token abc',
          `Bearer ${'A'.repeat(8000)}`,
          'Bearer svc_device_\u00e9',
        ]),
      };
    case 'basic':
      return { authorization: `Basic ${Buffer.from('owner:password').toString('base64')}` };
    case 'cookie-garbage':
      return { cookie: `placard.sid=${rng.hex(43)}; placard.sid.sig=${rng.hex(27)}`, 'x-csrf-token': rng.hex(20) };
    case 'session-and-bearer':
      return { ...s(p.owner), authorization: `Bearer ${p.device.token}` };
  }
}

/** The credential a valid request to `op` carries. */
function rightCred(op: Operation, rng: Rng): CredChoice {
  if (SELF_DESTRUCTIVE.test(op.key)) return op.auth.includes('public') ? rng.pick(['none', 'victim'] as const) : 'victim';
  if (op.auth.includes('public')) return 'none';
  const choices: CredChoice[] = [];
  if (op.auth.includes('session')) {
    const need = ROLE_ORDER.indexOf(op.minRole ?? 'viewer');
    for (const role of ROLE_ORDER) if (ROLE_ORDER.indexOf(role) <= need) choices.push(role as CredChoice);
    choices.push('owner', 'owner', 'owner');
  }
  if (op.auth.includes('device')) choices.push('device', 'device', 'device');
  if (op.auth.some((a) => a.startsWith('integration:')))
    choices.push('integration', op.auth.includes('integration:fleet_health:read') ? 'integration-fleet' : 'integration');
  return rng.pick(choices);
}

type Mode = 'valid' | 'body' | 'query' | 'path' | 'headers' | 'cred' | 'csrf' | 'encoding' | 'raw' | 'method';

export interface Built {
  req: FuzzRequest;
  mode: Mode;
  op: Operation;
  /** The operation whose responses the answer is checked against (HEAD is GET's). */
  checkAs: Operation | null;
  /** For unknown methods: the methods the path has. */
  expectAllow?: string[];
}

function pathIdValue(op: Operation, param: Param, ctx: GenContext & { pools: Pools; destructive: boolean }): string {
  const { rng, pools } = ctx;
  const segs = op.path.split('/');
  const at = segs.indexOf(`{${param.name}}`);
  const resource = param.name === 'id' ? (segs[at - 1] ?? 'unknown') : param.name;
  if (param.name === 'name' && op.path.includes('/backups/')) return pools.stringFor('backups', rng) ?? 'placard-backup-20250101T000000000Z-manual.tar';
  if (param.name === 'action') return pools.stringFor('actions', rng) ?? rng.pick(['backup', 'vacuum', 'restore']);
  if (param.name === 'provider' || param.name === 'type') {
    // A segment the server takes as any text but answers for only a few (data-source providers): mostly those.
    const examples = (param.schema as { examples?: unknown[] }).examples;
    if (Array.isArray(examples) && examples.length && rng.chance(0.85)) return String(rng.pick(examples));
    return asText(validValue(param.schema, ctx, param.name));
  }
  if (rng.chance(0.08)) return rng.uuid();
  const known = pools.idFor(resourceKey(resource), rng, ctx.destructive);
  return known ?? asText(validValue(param.schema, ctx, param.name));
}

function hostilePathValue(rng: Rng): string {
  return rng.pick([
    'not-a-uuid',
    '0190F5A2-7B3C-7DEF-8ABC-0123456789AB',
    '00000000-0000-0000-0000-000000000000',
    rng.uuid(),
    '%00',
    '..%2F..%2Fetc%2Fpasswd',
    '%2e%2e',
    'x'.repeat(3000),
    '%F0%9F%98%80',
    '%ZZ',
    '%C0%AE',
    "1'%20OR%20'1'%3D'1",
    '-1',
    '0',
    'null',
    '%20',
  ]);
}

/** A generated value as query or path text. */
function asText(v: unknown): string {
  return v instanceof RawJson ? v.text : typeof v === 'string' ? v : toJsonText(v);
}

/** encodeURIComponent that also takes lone surrogates (sent as the bytes of an invalid UTF-8 sequence). */
function enc(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return encodeURIComponent(s.replace(/[\ud800-\udfff]/g, '\u0000')).replace(/%00/g, '%ED%A0%80');
  }
}

function fillPath(op: Operation, values: Record<string, string>, raw = false): string {
  return op.path.replace(/\{([^}]+)\}/g, (_m, name) => (raw ? values[name]! : enc(values[name]!)));
}

export class Fuzzer {
  readonly rng: Rng;
  readonly pools = new Pools();
  readonly target: FuzzTarget;
  private api: Api;
  private doc: any;
  private ops: Operation[] = [];
  private principals!: Principals;
  private validators = new Map<any, ValidateFunction>();
  private ajv: Ajv2020;
  readonly findings: Finding[] = [];
  private byStatus: Record<string, number> = {};
  private byMode: Record<string, number> = {};
  private reached = new Set<string>();
  private succeeded = new Set<string>();
  private count = 0;
  private readonly dataDir: string;
  private findingKeys = new Map<string, number>();
  /** Requests Node's HTTP parser refused before the app saw them (400/431 without a request id). */
  parserRejected = 0;
  private readonly inFlight = new Set<Built>();
  /** A real backup archive of this server (a valid body for uploading one). */
  private validBackup: Buffer | null = null;
  /** The last requests answered: a crash after its answer (a stream failing later) is one of them. */
  private readonly recent: Built[] = [];

  constructor(readonly options: FuzzOptions) {
    this.rng = new Rng(options.seed);
    this.dataDir = mkdtempSync(path.join(os.tmpdir(), 'placard-fuzz-'));
    this.target = new FuzzTarget(this.dataDir);
    this.api = apiOf(this.target);
    this.ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
    addFormats(this.ajv);
  }

  private log(line: string) {
    this.options.log?.(line);
  }

  /** The document the requests are made from and the answers checked against. */
  useDocument(doc: any): void {
    this.doc = doc;
    this.ajv.removeSchema('doc');
    this.ajv.addSchema({ $id: 'doc', components: doc.components });
    this.validators.clear();
    this.ops = operationsOf(doc);
  }

  /** Starts the server, reads its document, signs in every kind of principal and fills the pools. */
  async setup(): Promise<void> {
    await this.target.start();
    const docRes = await this.api.call('GET', '/api/v1/openapi.json');
    if (docRes.status !== 200) throw new Error(`openapi.json answered ${docRes.status}`);
    this.useDocument(docRes.json);
    this.log(`fuzz: ${this.ops.length} operations in the served document`);

    const setup = await this.api.call('POST', '/api/v1/auth/setup', {
      json: { email: 'fuzz-owner@example.test', password: 'Fuzz-owner-password-1', displayName: 'Fuzz owner' },
      localAddress: freshAddress(),
    });
    if (setup.status !== 201) throw new Error(`setup answered ${setup.status}`);
    const owner = await login(this.api, 'fuzz-owner@example.test', 'Fuzz-owner-password-1', 'owner');
    const roles = {
      admin: await createUser(this.api, owner, 'admin'),
      publisher: await createUser(this.api, owner, 'publisher'),
      editor: await createUser(this.api, owner, 'editor'),
      viewer: await createUser(this.api, owner, 'viewer'),
    };
    const victim = await createUser(this.api, owner, 'owner');
    const device = await pairScreen(this.api, owner, 'Fuzz main screen');
    const victimDevice = await pairScreen(this.api, owner, 'Fuzz victim screen');
    const integration = await makeToken(this.api, owner, ['manual_table_rows:write', 'fleet_health:read']);
    const integrationFleetOnly = await makeToken(this.api, owner, ['fleet_health:read']);
    this.principals = { owner, roles, victim, device, victimDevice, integration, integrationFleetOnly };
    this.protectPrincipals();

    // Content: an image asset (processed), a partial upload, then one valid create of everything.
    const img = await upload(this.api, owner, tinyPng(this.rng), 'fuzz.png', true);
    this.pools.harvest('/api/v1/assets', img.asset);
    await upload(this.api, owner, tinyPng(this.rng), 'partial.png', false).then((u) => this.pools.addId('uploads', u.uploadId));
    const partialByEditor = await upload(this.api, roles.editor, tinyPng(this.rng), 'partial2.png', false);
    this.pools.addId('uploads', partialByEditor.uploadId);
    await this.waitAssetsReady();
    await this.harvestLists();
    await this.populate();
    // A backup to restore, a pending pairing session, a command for the main screen.
    await this.api.call('POST', '/api/v1/system/maintenance/backup', { headers: sessionHeaders(owner), json: { wait: true } });
    const pairing = await this.api.call('POST', '/api/v1/player/pairing-sessions', { json: { deviceName: 'pending' }, localAddress: freshAddress() });
    if (pairing.status === 201) {
      this.pools.addId('pairing-sessions', pairing.json.data.id);
      this.pools.addString('code', pairing.json.data.code);
      this.pools.addString('pollSecret', pairing.json.data.pollSecret);
    }
    await this.api.call('POST', `/api/v1/screens/${device.id}/commands`, { headers: sessionHeaders(owner), json: { type: 'reload' } });
    // The image on the main screen (its variants become downloadable with the device credential).
    const playlist = await this.api.call('POST', '/api/v1/playlists', {
      headers: sessionHeaders(owner),
      json: { name: 'Fuzz main', items: [{ assetId: img.asset.id }] },
    });
    if (playlist.status === 201) {
      this.pools.harvest('/api/v1/playlists', playlist.json.data);
      await this.api.call('PUT', `/api/v1/screens/${device.id}/playlist-assignment`, {
        headers: sessionHeaders(owner),
        json: { playlistId: playlist.json.data.id },
      });
    }
    // A disabled user (deletable), and a backup's bytes (a valid upload).
    const disabled = await createUser(this.api, owner, 'editor');
    await this.api.call('PATCH', `/api/v1/users/${disabled.userId}`, { headers: sessionHeaders(owner), json: { disabled: true } });
    this.pools.addId('users', disabled.userId);
    const backups = await this.api.call('GET', '/api/v1/system/backups', { headers: sessionHeaders(owner) });
    const name = backups.json?.data?.items?.[0]?.name;
    if (name) {
      const file = await this.api.call('GET', `/api/v1/system/backups/${name}`, { headers: sessionHeaders(owner) });
      if (file.status === 200 && file.body.length < 32 * 1024 * 1024) this.validBackup = file.body;
    }
    await this.harvestLists();
    this.log(`fuzz: state ready (${this.target.url})`);
  }

  private protectPrincipals() {
    const p = this.principals;
    for (const s of [p.owner, ...Object.values(p.roles)]) this.pools.protectedIds.add(s.userId);
    for (const b of [p.device, p.integration, p.integrationFleetOnly]) this.pools.protectedIds.add(b.id);
  }

  private async waitAssetsReady() {
    const until = Date.now() + 60_000;
    while (Date.now() < until) {
      const res = await this.api.call('GET', '/api/v1/assets?limit=100', { headers: sessionHeaders(this.principals.owner) });
      if (res.status === 200 && res.json.data.items.every((a: any) => a.state !== 'processing')) return;
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** GETs every parameter-free collection and a few of its items, to learn ids. */
  private async harvestLists() {
    const owner = sessionHeaders(this.principals.owner);
    for (const op of this.ops) {
      if (op.method !== 'GET' || !op.auth.includes('session') || op.path.includes('{')) continue;
      const res = await this.api.call('GET', op.path, { headers: owner });
      if (res.status === 200 && res.json) this.pools.harvest(op.path, res.json.data);
    }
    for (const op of this.ops) {
      if (op.method !== 'GET' || !op.auth.includes('session') || (op.path.match(/\{/g) ?? []).length !== 1) continue;
      const ctx = this.genContext(false);
      const p = fillPath(
        op,
        Object.fromEntries(
          op.params.filter((x) => x.in === 'path').map((x) => [x.name, pathIdValue(op, x, { ...ctx, pools: this.pools, destructive: false })]),
        ),
      );
      const res = await this.api.call('GET', p, { headers: owner });
      if (res.status === 200 && res.json) this.pools.harvest(op.path, res.json.data);
    }
    const dev = await this.api.call('GET', '/api/v1/player/commands', { headers: { authorization: `Bearer ${this.principals.device.token}` } });
    if (dev.status === 200) this.pools.harvest('/api/v1/player/commands', dev.json.data);
  }

  /** One valid create of every kind of thing, tried a few times each (generated bodies). */
  private async populate() {
    const creators = this.ops.filter(
      (o) =>
        (o.method === 'POST' || o.method === 'PUT') &&
        o.bodySchema &&
        o.auth.includes('session') &&
        !SELF_DESTRUCTIVE.test(o.key) &&
        !/maintenance|import\/apply|demo|display-control/.test(o.path),
    );
    let made = 0;
    for (let pass = 0; pass < 2; pass++) {
      for (const op of creators) {
        for (let attempt = 0; attempt < 6; attempt++) {
          const built = this.build(op, 'valid', 'owner');
          const out = await send(this.target.url, built.req, 30_000);
          if (out.ok && out.res.status < 300) {
            made++;
            this.absorb(op, out.res);
            break;
          }
        }
      }
    }
    this.log(`fuzz: populate made ${made} things`);
  }

  private genContext(destructive: boolean, op?: Operation): GenContext {
    const rng = this.rng;
    // `ids` in a body is of the operation's own resource (`/assets/archive` -> assets).
    const own = op ? (op.path.split('/').filter(Boolean)[2] ?? 'unknown') : 'unknown';
    return {
      rng,
      doc: this.doc,
      idFor: (name) => this.pools.idFor(name === 'id' || name === 'ids' ? own : name === 'itemIds' ? 'items' : name, rng, destructive),
      stringFor: (name) => this.pools.stringFor(name, rng) ?? this.pools.stringFor(`pairing-sessions.${name}`, rng),
    };
  }

  private absorb(op: Operation, res: FuzzResponse) {
    if (res.status >= 300 || !String(res.headers['content-type'] ?? '').includes('json')) return;
    try {
      const json = JSON.parse(res.body.toString());
      if (json && typeof json === 'object' && 'data' in json) this.pools.harvest(op.path, json.data);
    } catch {
      /* not JSON */
    }
  }

  /** One request for `op` in `mode`. */
  build(op: Operation, mode: Mode, forceCred?: CredChoice): Built {
    const rng = this.rng;
    const destructive = UNSAFE.has(op.method);
    const ctx = { ...this.genContext(destructive, op), pools: this.pools, destructive };
    let cred: CredChoice = forceCred ?? rightCred(op, rng);
    if (mode === 'cred') cred = rng.pick(ALL_CREDS.filter((c) => c !== cred));
    if (mode === 'csrf') cred = rng.pick(['owner-no-csrf', 'owner-bad-csrf'] as const);
    const headers: Record<string, string> = {
      'x-request-id': `fuzz-${this.options.seed}-${this.count}-${randomUUID().slice(0, 8)}`,
      ...credHeaders(this.principals, cred, rng),
    };

    // Path
    const values: Record<string, string> = {};
    let rawPath = false;
    for (const p of op.params.filter((x) => x.in === 'path')) values[p.name] = pathIdValue(op, p, ctx);
    if (mode === 'path' && Object.keys(values).length) {
      const name = rng.pick(Object.keys(values));
      values[name] = hostilePathValue(rng);
      rawPath = true;
    }
    let reqPath = fillPath(op, values, rawPath);
    if (rawPath) reqPath = reqPath.replace(/[^\x21-\x7e]/g, (c) => enc(c));

    // Query
    const query: string[] = [];
    for (const p of op.params.filter((x) => x.in === 'query')) {
      if (!p.required && !rng.chance(0.5)) continue;
      let v = validValue(p.schema, ctx, p.name);
      if (mode === 'query' && rng.chance(0.5)) v = hostileValue(rng);
      const text = asText(v);
      query.push(`${enc(p.name)}=${enc(text ?? '').slice(0, 20_000)}`);
      if (mode === 'query' && rng.chance(0.2)) query.push(`${encodeURIComponent(p.name)}=${encodeURIComponent(asText(validValue(p.schema, ctx, p.name)))}`);
    }
    if (mode === 'query') {
      query.push(
        rng.pick([
          `unknown=${enc(asText(hostileValue(rng)).slice(0, 1000))}`,
          'limit=0',
          'limit=-1',
          'limit=1e3',
          'limit=99999999999',
          `cursor=${rng.hex(30)}`,
          `cursor=${Buffer.from(JSON.stringify({ k: "'", i: rng.uuid() })).toString('base64url')}`,
          '__proto__[x]=1',
          'a[b][c]=1',
          '%ZZ=1',
          `q=${'%25'.repeat(500)}`,
        ]),
      );
    }
    if (query.length) reqPath += `?${query.join('&')}`;

    // Body
    let body: Buffer | undefined;
    if (op.bodySchema) {
      const hint = HINTS[op.key];
      let value = hint && rng.chance(0.5) ? (hint(this.pools, rng) ?? validValue(op.bodySchema, ctx)) : validValue(op.bodySchema, ctx);
      if (mode === 'body') value = hostileBody(value, rng);
      let text = toJsonText(value);
      headers['content-type'] = 'application/json';
      if (mode === 'encoding') {
        const how = rng.int(0, 11);
        if (how === 0)
          headers['content-type'] = rng.pick([
            'text/plain',
            'application/x-www-form-urlencoded',
            'multipart/form-data; boundary=x',
            'application/xml',
            '',
            'application/json; charset=latin1',
            'application/json; charset=utf-16',
            'application/vnd.api+json',
            'application/json-patch+json',
          ]);
        else if (how === 1) text = text.slice(0, Math.max(0, rng.int(0, text.length - 1)));
        else if (how === 2) text = `\ufeff${text}`;
        else if (how === 3) text = text.replace(/^\{/, '{"a":1,"a":2,');
        else if (how === 4) text = rng.pick(['', 'null', '1', '"x"', 'true', '[]', '{', '}', 'NaN', '{"a":undefined}', "{'a':1}", '{"a":1}garbage']);
        else if (how === 5) body = Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]), Buffer.from('"}')]);
        else if (how === 6) {
          headers['content-encoding'] = 'gzip';
          body = rng.chance(0.5) ? gzipSync(Buffer.from(text)) : Buffer.from('not gzip at all');
        } else if (how === 7) {
          headers['content-encoding'] = rng.pick(['br', 'deflate', 'x-unknown', 'gzip, gzip']);
        } else if (how === 8) text = ' '.repeat(rng.pick([10, 1_100_000])) + text;
        else if (how === 9) text = toJsonText({ pad: 'x'.repeat(rng.pick([1_050_000, 17_000_000])) });
        else if (how === 10) {
          headers['transfer-encoding'] = 'chunked';
          delete headers['content-length'];
        } else text = JSON.stringify(value, null, 2);
      }
      body ??= Buffer.from(text);
    } else if (op.bodyTypes.length) {
      headers['content-type'] = rng.chance(0.85) ? rng.pick(op.bodyTypes) : rng.pick(['application/json', 'text/plain', '']);
      body = this.rawBody(op, mode === 'raw' || mode === 'body' || mode === 'encoding');
      // tus creation takes no bytes (creation-with-upload is not supported).
      if (op.key === 'POST /api/v1/uploads' && mode === 'valid') body = undefined;
    } else if (mode === 'encoding' || mode === 'body') {
      // A body where none is expected.
      headers['content-type'] = rng.pick(['application/json', 'text/plain', 'application/octet-stream']);
      body = Buffer.from(rng.pick(['{}', '{"x":1}', 'garbage', '['.repeat(10_000)]));
    }
    if (op.path.startsWith('/api/v1/uploads') && op.method !== 'OPTIONS' && !op.path.endsWith('/complete')) Object.assign(headers, this.tusHeaders(op, body));
    if (op.path.startsWith('/api/v1/player/pairing-sessions/')) headers['x-pairing-secret'] = this.pools.stringFor('pollSecret', rng) ?? 'x';
    if ((op.method === 'PATCH' || op.method === 'PUT') && rng.chance(0.15)) {
      headers['if-match'] = rng.pick([
        this.pools.stringFor('revision', rng) ?? '1',
        `"${this.pools.stringFor('revision', rng) ?? '1'}"`,
        '*',
        'garbage',
        '"0"',
      ]);
    }
    if (mode === 'headers') Object.assign(headers, hostileHeaders(rng));

    let method = op.method;
    let checkAs: Operation | null = op;
    let expectAllow: string[] | undefined;
    if (mode === 'method') {
      // Every path template the concrete path matches answers (`/assets/archive` is also `/assets/{id}`).
      const concrete = reqPath.split('?')[0]!.split('/');
      const matches = (template: string) => {
        const t = template.split('/');
        return t.length === concrete.length && t.every((seg, i) => seg === concrete[i] || (seg.startsWith('{') && concrete[i] !== ''));
      };
      const methods = [...new Set(this.ops.filter((o) => matches(o.path)).map((o) => o.method))];
      const choice = rng.pick(['HEAD', 'OPTIONS', 'PUT', 'DELETE', 'PATCH', 'POST', 'GET', 'TRACE', 'PROPFIND']);
      method = choice;
      // The operation that answers: this path's, else another template the path matches
      // (`PATCH .../items/bulk` is `PATCH .../items/{itemId}` with a bad id).
      const same = this.ops.find((o) => o.path === op.path && o.method === choice) ?? this.ops.find((o) => matches(o.path) && o.method === choice);
      const get = this.ops.find((o) => o.path === op.path && o.method === 'GET') ?? this.ops.find((o) => matches(o.path) && o.method === 'GET');
      if (same) checkAs = same;
      else if (choice === 'HEAD' && get) checkAs = get;
      else {
        checkAs = null;
        expectAllow = methods.includes('GET') && !methods.includes('HEAD') ? [...methods, 'HEAD'] : methods;
      }
    }
    const raw = mode === 'headers' && Object.values(headers).some((v) => /[^\x20-\x7e]/.test(v) || v === '');
    if (headers['transfer-encoding']) delete headers['content-length'];
    return {
      req: { method, path: reqPath, headers, body, localAddress: this.addressFor(op), raw: raw || method === 'PROPFIND' },
      mode,
      op,
      checkAs,
      expectAllow,
    };
  }

  /** Sign-in routes are throttled per address: most requests come from their own loopback address. */
  private addressFor(op: Operation): string {
    if (/\/(auth|pairing|enroll|me\/security)/.test(op.path) && this.rng.chance(0.9))
      return `127.${this.rng.int(1, 150)}.${this.rng.int(0, 255)}.${this.rng.int(1, 254)}`;
    return '127.0.0.1';
  }

  private tusHeaders(op: Operation, body: Buffer | undefined): Record<string, string> {
    const rng = this.rng;
    const h: Record<string, string> = { 'tus-resumable': '1.0.0' };
    if (op.method === 'POST') {
      h['upload-length'] = String(rng.pick([body?.length ?? 10, 1, 100, 1024 * 1024]));
      if (rng.chance(0.5)) h['upload-metadata'] = `filename ${Buffer.from(rng.pick(['a.png', '../../x.png', 'ü.jpg', ''])).toString('base64')}`;
    }
    if (op.method === 'PATCH') h['upload-offset'] = String(rng.pick([0, 0, 1, 10]));
    return h;
  }

  private rawBody(op: Operation, hostile: boolean): Buffer {
    const rng = this.rng;
    if (!hostile) {
      if (op.bodyTypes.some((t) => t.startsWith('image/'))) return tinyPng(rng);
      if (op.path.startsWith('/api/v1/uploads')) return tinyPng(rng);
      if (op.bodyTypes.includes('application/x-tar')) return this.validBackup && rng.chance(0.7) ? this.validBackup : this.tar(rng.int(0, 2));
      return Buffer.from(rng.hex(rng.int(1, 200)));
    }
    return rng.pick<() => Buffer>([
      () => Buffer.alloc(0),
      () => Buffer.from('not what you expected'),
      () => Buffer.alloc(rng.pick([1, 512, 1024 * 1024 + 1]), rng.int(0, 255)),
      () => tinyPng(rng).subarray(0, rng.int(1, 60)),
      () => Buffer.concat([tinyPng(rng).subarray(0, 33), Buffer.alloc(100, 0xff)]),
      () => Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"></svg>'),
      () => this.tar(rng.int(0, 5)),
      () => this.tar(rng.int(0, 5)).subarray(0, rng.int(0, 1500)),
    ])();
  }

  /** Tar archives: a plain file, a traversal name, a symlink, a directory, a device, a huge pax header. */
  private tar(kind: number): Buffer {
    const entries: [string, string, string, string?][] = [
      // name, type flag, content, link name
      ['hello.txt', '0', 'hello'],
      ['../../../../tmp/placard-fuzz-escape', '0', 'bad'],
      ['link', '2', '', '/etc/passwd'],
      ['dir/', '5', ''],
      ['dev', '3', ''],
      ['PaxHeader', 'x', `${70_000 + 12} comment=${'y'.repeat(70_000)}\n`],
    ];
    const [name, type, content, link] = entries[kind % entries.length]!;
    return Buffer.concat([tarEntry(name, type, Buffer.from(content), link), Buffer.alloc(1024)]);
  }

  private chooseMode(op: Operation): Mode {
    const rng = this.rng;
    const hasPath = op.params.some((p) => p.in === 'path');
    const hasQuery = op.params.some((p) => p.in === 'query');
    const session = op.auth.includes('session');
    return rng.weighted<Mode>([
      [45, 'valid'],
      [op.bodySchema ? 14 : 2, 'body'],
      [hasQuery ? 7 : 1, 'query'],
      [hasPath ? 7 : 0, 'path'],
      [6, 'headers'],
      [op.auth.includes('public') ? 3 : 10, 'cred'],
      [session && UNSAFE.has(op.method) ? 4 : 0, 'csrf'],
      [op.bodySchema ? 7 : 1, 'encoding'],
      [op.bodyTypes.length && !op.bodySchema ? 8 : 0, 'raw'],
      [2, 'method'],
    ]);
  }

  private validatorFor(schema: any): ValidateFunction {
    let v = this.validators.get(schema);
    if (!v) {
      const rewritten = JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, '"doc#/components/'));
      v = this.ajv.compile(rewritten);
      this.validators.set(schema, v);
    }
    return v;
  }

  private record(kind: FindingKind, built: Built, status: number | null, detail: string, res: FuzzResponse | null, requestId?: string) {
    const key = `${kind} ${built.checkAs?.key ?? built.op.key} ${status}`;
    const seen = (this.findingKeys.get(key) ?? 0) + 1;
    this.findingKeys.set(key, seen);
    if (seen > 3) return; // three examples of each are plenty
    this.findings.push({
      kind,
      op: built.checkAs?.key ?? `${built.req.method} ${built.op.path}`,
      status,
      detail,
      request: describeRequest(built.req),
      response: res ? `${res.status} ${res.headers['content-type'] ?? ''} ${res.body.subarray(0, 600).toString()}` : '(none)',
      serverLog: requestId ? this.target.logsFor(requestId) : [],
    });
  }

  /** Checks one answer against the document; what is wrong becomes a finding. */
  checkAnswer(built: Built, res: FuzzResponse) {
    const status = res.status;
    const rid = built.req.headers['x-request-id']!;
    const op = built.checkAs;
    this.byStatus[status] = (this.byStatus[status] ?? 0) + 1;
    const sentId = /^[A-Za-z0-9._:-]{1,128}$/.test(rid) ? rid : null;
    if (!res.headers['x-request-id'] && (status === 400 || status === 431) && !res.headers['content-type']) {
      // Refused by Node's HTTP parser (a malformed or oversized header): not an answer of the app.
      this.parserRejected++;
      return;
    }
    if (sentId && res.headers['x-request-id'] !== sentId)
      this.record('request-id', built, status, `X-Request-Id ${res.headers['x-request-id']} is not the one sent`, res);

    let json: any;
    const type = String(res.headers['content-type'] ?? '');
    if (type.includes('json') && res.body.length) {
      try {
        json = JSON.parse(res.body.toString());
      } catch {
        json = undefined;
      }
    }
    // A restore under way answers 503 with details.checks.restore; a HEAD carries no body, so
    // the restore gate's Retry-After (10 s; a broken data directory says 60) tells it apart.
    const restoring = status === 503 && (json?.error?.details?.checks?.restore || (built.req.method === 'HEAD' && String(res.headers['retry-after']) === '10'));
    if (status >= 500 && !restoring) {
      const logs = sentId ? this.target.logsFor(sentId) : [];
      const contract = logs.find((l) => /does not declare|not one of its declared|breaks its schema/.test(l));
      if (contract) this.record('undeclared', built, status, contract.replace(/^unhandled error: /, ''), res, sentId ?? undefined);
      else this.record('5xx', built, status, `answered ${status} ${json?.error?.code ?? ''}`, res, sentId ?? undefined);
    }
    if (!op) {
      // A method the path does not have: 405 with Allow naming the document's methods (OPTIONS: 204).
      const expected = built.req.method === 'OPTIONS' ? 204 : 405;
      const allow = String(res.headers.allow ?? '')
        .split(/,\s*/)
        .filter(Boolean)
        .sort();
      if (status !== expected && !(status === 401 && built.req.method !== 'OPTIONS') && status < 500) {
        this.record('allow', built, status, `a method the path does not have answered ${status}, not ${expected}`, res);
      } else if (status === expected && allow.join(',') !== [...built.expectAllow!].sort().join(',')) {
        this.record('allow', built, status, `Allow is ${allow.join(', ')}; the document has ${built.expectAllow!.join(', ')}`, res);
      }
      return;
    }
    this.reached.add(op.key);
    if (status < 300) this.succeeded.add(op.key);
    const declared = op.responses[String(status)] ?? op.responses.default;
    if (!declared) {
      if (!(status >= 500 && !restoring))
        this.record(
          'undocumented-status',
          built,
          status,
          `answered ${status}${json?.error?.code ? ` ${json.error.code}` : ''}, which the document does not list`,
          res,
          sentId ?? undefined,
        );
      return;
    }
    const head = built.req.method === 'HEAD';
    if (head || status === 204 || status === 304 || status === 101) return;
    const content = declared.content as Record<string, { schema?: any }> | undefined;
    if (!content) {
      if (res.body.length) this.record('content-type', built, status, `answered a body (${type}) where the document declares none`, res);
      return;
    }
    const types = Object.keys(content);
    const bare = type.split(';')[0]!.trim().toLowerCase();
    const match = types.find((t) => t === bare || (t.endsWith('/*') && bare.startsWith(t.slice(0, -1))) || t === '*/*');
    if (!match) {
      this.record('content-type', built, status, `answered ${type || 'no content type'}; the document says ${types.join(', ')}`, res);
      return;
    }
    const schema = content[match]?.schema;
    if (schema && match.includes('json')) {
      if (json === undefined) {
        this.record('schema', built, status, 'the body is not JSON', res);
        return;
      }
      const validate = this.validatorFor(schema);
      if (!validate(json)) this.record('schema', built, status, `the body breaks the documented schema: ${JSON.stringify(validate.errors?.slice(0, 3))}`, res);
      const codes: string[] | undefined = declared['x-placard-error-codes'];
      if (status >= 400 && codes && !codes.includes(json?.error?.code)) {
        this.record('error-code', built, status, `code ${json?.error?.code} is not one of the documented ${codes.join(', ')}`, res);
      }
    }
    if (status < 300) this.absorb(op, res);
  }

  restores = 0;

  private async restore(): Promise<void> {
    const owner = sessionHeaders(this.principals.owner);
    const list = await this.api.call('GET', '/api/v1/system/backups', { headers: owner }).catch(() => null);
    const name = list?.json?.data?.items?.at(-1)?.name;
    if (!name) return;
    const res = await send(
      this.target.url,
      {
        method: 'POST',
        path: '/api/v1/system/maintenance/restore',
        headers: { ...owner, 'content-type': 'application/json' },
        body: Buffer.from(JSON.stringify({ options: { backup: name } })),
      },
      30_000,
    );
    if (res.ok && res.res.status === 202) {
      this.restores++;
      this.log(`fuzz: a restore of ${name} started at request ${this.count}`);
    } else this.log(`fuzz: the restore did not start: ${res.ok ? `${res.res.status} ${res.res.body.toString().slice(0, 200)}` : res.detail}`);
  }

  private async health(): Promise<void> {
    // Sessions, device and tokens the fuzz may have ended: checked and replaced.
    const p = this.principals;
    const fresh = async (s: SessionCred): Promise<SessionCred> => {
      const st = await this.api.call('GET', '/api/v1/auth/status', { headers: sessionHeaders(s) });
      if (st.status === 200 && st.json?.data?.authenticated && st.json.data.user?.role === s.role) return s;
      try {
        const again = await login(this.api, s.email, s.password, s.role);
        return again;
      } catch {
        return createUser(this.api, p.owner, s.role).catch(() => s);
      }
    };
    p.owner = await fresh(p.owner);
    for (const role of ['admin', 'publisher', 'editor', 'viewer'] as const) p.roles[role] = await fresh(p.roles[role]);
    const victimStatus = await this.api.call('GET', '/api/v1/me/security', { headers: sessionHeaders(p.victim) });
    if (victimStatus.status !== 200 || victimStatus.json?.data?.totpEnabled || (victimStatus.json?.data?.passkeys?.length ?? 0) > 0) {
      p.victim = await createUser(this.api, p.owner, 'owner').catch(() => p.victim);
    }
    const dev = await this.api.call('GET', '/api/v1/player/config', { headers: { authorization: `Bearer ${p.device.token}` } });
    if (dev.status !== 200) {
      await this.api.call('POST', `/api/v1/screens/${p.device.id}/enable`, { headers: sessionHeaders(p.owner) });
      const again = await this.api.call('GET', '/api/v1/player/config', { headers: { authorization: `Bearer ${p.device.token}` } });
      if (again.status !== 200) p.device = await pairScreen(this.api, p.owner, 'Fuzz main screen');
    }
    const vdev = await this.api.call('GET', '/api/v1/player/config', { headers: { authorization: `Bearer ${p.victimDevice.token}` } });
    if (vdev.status !== 200) p.victimDevice = await pairScreen(this.api, p.owner, 'Fuzz victim screen').catch(() => p.victimDevice);
    for (const key of ['integration', 'integrationFleetOnly'] as const) {
      const r = await this.api.call('GET', '/api/v1/fleet-health', { headers: { authorization: `Bearer ${p[key].token}` } });
      if (r.status === 401)
        p[key] = await makeToken(this.api, p.owner, key === 'integration' ? ['manual_table_rows:write', 'fleet_health:read'] : ['fleet_health:read']);
    }
    this.protectPrincipals();
  }

  /** The fuzz loop. */
  async run(): Promise<FuzzReport> {
    const started = Date.now();
    const deadline = this.options.deadlineMs ?? 20_000;
    const order = this.rng.shuffle(this.ops);
    let next = 0;
    const total = this.options.requests;
    const concurrency = Math.max(1, this.options.concurrency ?? 1);
    let sinceHealth = 0;
    let crashes = 0;
    let hangs = 0;
    let restarting: Promise<void> | null = null;
    let healthy: Promise<void> | null = null;

    const worker = async () => {
      for (;;) {
        if (restarting) await restarting;
        if (healthy) await healthy;
        if (this.count >= total) return;
        const i = this.count++;
        // Once per run (longer runs), a real restore of the setup's backup while requests go
        // on: they answer 503 until it is done, then the principals are checked and replaced.
        if (i === Math.floor(total * 0.6) && total >= 1000) void this.restore();
        const op = order[next++ % order.length]!;
        if (next % order.length === 0) order.splice(0, order.length, ...this.rng.shuffle(this.ops));
        const mode = this.chooseMode(op);
        this.byMode[mode] = (this.byMode[mode] ?? 0) + 1;
        const built = this.build(op, mode);
        this.inFlight.add(built);
        const out = await send(this.target.url, built.req, deadline);
        this.inFlight.delete(built);
        this.recent.push(built);
        if (this.recent.length > 8) this.recent.shift();
        if (out.ok) {
          this.checkAnswer(built, out.res);
        } else if (!this.target.alive || out.error === 'refused') {
          // Give the process a moment to be seen dead.
          await new Promise((r) => setTimeout(r, 200));
          if (!this.target.alive) {
            crashes++;
            // The one in flight, or one answered just before (a stream failing after the answer): all are named.
            const suspects = [...new Set([built, ...this.inFlight, ...this.recent.slice().reverse()])];
            if (crashes <= 5) {
              this.findings.push({
                kind: 'crash',
                op: 'server',
                status: null,
                detail: `the server died: ${(this.target.exited ?? '').slice(-1500)}`,
                request: suspects.map((b) => describeRequest(b.req)).join('\n  or: '),
                response: '(none)',
                serverLog: [],
              });
            }
            this.inFlight.clear();
            this.recent.length = 0;
            restarting ??= this.target.restart().finally(() => (restarting = null));
            await restarting;
          }
        } else if (out.error === 'timeout') {
          hangs++;
          this.record('hang', built, null, out.detail, null);
        }
        if (++sinceHealth >= 250) {
          sinceHealth = 0;
          healthy ??= this.health()
            .catch((err) => this.log(`fuzz: health check failed: ${(err as Error).message}`))
            .finally(() => (healthy = null));
        }
        if (this.options.progressEvery && (i + 1) % this.options.progressEvery === 0) {
          const errors = Object.entries(this.byStatus)
            .filter(([s]) => Number(s) >= 500)
            .reduce((n, [, c]) => n + c, 0);
          this.log(
            `fuzz: ${i + 1}/${total} requests, ${this.findings.length} findings, ${errors} 5xx, ${crashes} crashes, ${hangs} hangs, ${Math.round((Date.now() - started) / 1000)} s`,
          );
        }
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));

    // Alive and ready after: /healthz and /readyz (a restore the fuzz started may still run).
    let readyAfter = false;
    const until = Date.now() + 120_000;
    while (Date.now() < until) {
      const ready = await send(this.target.url, { method: 'GET', path: '/readyz', headers: {} }, 10_000);
      if (ready.ok && ready.res.status === 200) {
        readyAfter = true;
        break;
      }
      if (!this.target.alive) break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    const live = await send(this.target.url, { method: 'GET', path: '/healthz', headers: {} }, 10_000);
    if (!readyAfter || !live.ok || live.res.status !== 200) {
      this.findings.push({
        kind: 'not-ready-after',
        op: 'GET /readyz',
        status: null,
        detail: `the server is not alive and ready after the run (${this.target.alive ? 'running' : this.target.exited})`,
        request: '',
        response: '',
        serverLog: [],
      });
    }
    const serverErrors = Object.entries(this.byStatus)
      .filter(([s]) => Number(s) >= 500 && Number(s) !== 503)
      .reduce((n, [, c]) => n + c, 0);
    return {
      seed: this.options.seed,
      requests: this.count,
      byStatus: this.byStatus,
      byMode: this.byMode,
      operations: this.ops.length,
      operationsReached: this.reached.size,
      operationsSucceeded: this.succeeded.size,
      crashes,
      hangs,
      serverErrors,
      undocumented: [...this.findingKeys].filter(([k]) => k.startsWith('undocumented-status') || k.startsWith('undeclared')).reduce((n, [, c]) => n + c, 0),
      findings: this.findings,
      parserRejected: this.parserRejected,
      durationMs: Date.now() - started,
      readyAfter,
    };
  }

  /** Operations never answered with a 2xx (for the report). */
  unreached(): string[] {
    return this.ops.map((o) => o.key).filter((k) => !this.succeeded.has(k));
  }

  async close(): Promise<void> {
    await this.target.stop();
    if (!this.options.keepData) rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/** One ustar entry: header and content padded to 512 bytes. */
function tarEntry(name: string, type: string, content: Buffer, link = ''): Buffer {
  const h = Buffer.alloc(512);
  const put = (text: string, at: number, len: number) => h.write(text.slice(0, len), at, len, 'latin1');
  const octal = (n: number, len: number) => `${n.toString(8).padStart(len - 1, '0')}\0`;
  put(name, 0, 100);
  put(octal(0o644, 8), 100, 8);
  put(octal(0, 8), 108, 8);
  put(octal(0, 8), 116, 8);
  put(octal(content.length, 12), 124, 12);
  put(octal(Math.floor(Date.now() / 1000), 12), 136, 12);
  put('        ', 148, 8);
  put(type, 156, 1);
  put(link, 157, 100);
  put('ustar\0', 257, 6);
  put('00', 263, 2);
  let sum = 0;
  for (const b of h) sum += b;
  put(octal(sum, 7), 148, 7);
  const pad = Buffer.alloc((512 - (content.length % 512)) % 512);
  return Buffer.concat([h, content, pad]);
}

/** A request as a reproducible curl command line. */
export function describeRequest(req: FuzzRequest): string {
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const parts = ['curl', '-sS', '-X', req.method];
  for (const [k, v] of Object.entries(req.headers)) parts.push('-H', q(`${k}: ${v.length > 300 ? `${v.slice(0, 300)}...(${v.length} chars)` : v}`));
  if (req.body) {
    const text = req.body.toString('utf8');
    const printable = Buffer.from(text, 'utf8').equals(req.body) && !/[\u0000-\u0008]/.test(text);
    if (req.body.length > 2000)
      parts.push(`--data-binary @body.bin  # ${req.body.length} bytes, base64 starts ${req.body.subarray(0, 120).toString('base64')}`);
    else if (printable) parts.push('--data-binary', q(text));
    else parts.push(`--data-binary @<(echo ${req.body.toString('base64')} | base64 -d)`);
  }
  parts.push(q(`$URL${req.path.length > 500 ? `${req.path.slice(0, 500)}...` : req.path}`));
  return parts.join(' ');
}

/** Known failures the integrator empties after merging the fix: matched findings do not fail the run. */
export interface KnownFailure {
  kind: FindingKind;
  /** The operation ("METHOD /path", or "server" for a crash), or a pattern of them. */
  op: string | RegExp;
  status?: number | null;
  /** Also match the finding's detail or request. */
  match?: RegExp;
  bug: string;
}

export function isKnown(f: Finding, known: readonly KnownFailure[]): KnownFailure | undefined {
  return known.find(
    (k) =>
      k.kind === f.kind &&
      (typeof k.op === 'string' ? k.op === f.op : k.op.test(f.op)) &&
      (k.status === undefined || k.status === f.status) &&
      (!k.match || k.match.test(`${f.detail}\n${f.request}\n${f.response}\n${f.serverLog.join('\n')}`)),
  );
}

export function formatFinding(f: Finding): string {
  return [
    `[${f.kind}] ${f.op} -> ${f.status ?? '-'}: ${f.detail.length > 1200 ? `${f.detail.slice(0, 1200)}...` : f.detail}`,
    `  request:  ${f.request}`,
    `  response: ${f.response.slice(0, 400)}`,
    ...(f.serverLog.length ? [`  server:   ${f.serverLog.join(' | ').slice(0, 600)}`] : []),
  ].join('\n');
}

export { deref };
