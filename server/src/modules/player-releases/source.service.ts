import { z } from 'zod';
import type { AppDeps } from '../../platform/app-deps.js';
import { nowIso } from '../../platform/db/ids.js';
import { ApiError } from '../../platform/http/errors.js';
import { OutboundError, type OutboundResponse, safeFetch } from '../../platform/http/outbound.js';
import type { ServerSecrets } from '../../platform/security/secrets.js';
import { fetchPolicy } from '../media/index.js';
import { claimPoll, deleteSource, saveSource, type SourceRow, sourceRow, updateSource } from './releases.repo.js';
import type { ReleaseSourceView } from './releases.schemas.js';
import { sourceView } from './views.js';

/**
 * The release source: a remote catalogue reached with the OAuth 2.0 Device Authorization
 * Grant (RFC 8628; docs/player-releases.md). The server is the client `placard-server`.
 * Discovery by RFC 8414; the device code and the token are sealed at rest (purpose
 * `release-source`); the token endpoint is asked at most once per interval (slow_down adds
 * 5 s) and never once the grant is settled. Every request goes through safeFetch.
 */

export const CLIENT_ID = 'placard-server';
export const SEAL_PURPOSE = 'release-source';
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const TIMEOUT_MS = 10_000;

const Discovery = z.object({ device_authorization_endpoint: z.url(), token_endpoint: z.url() });
const DeviceAnswer = z.object({
  device_code: z.string().min(1).max(2000),
  user_code: z.string().min(1).max(200),
  verification_uri: z.url().max(2000),
  verification_uri_complete: z.url().max(2000).optional(),
  expires_in: z.number().positive(),
  interval: z.number().int().min(0).max(3600).optional(),
});
const TokenAnswer = z.object({ access_token: z.string().min(1).max(8000), token_type: z.string().optional() });
const OAuthError = z.object({ error: z.string().max(200), error_description: z.string().max(2000).optional() });

/** A failure talking to the source, with a message for the admin. */
export class SourceError extends Error {}

const plusSec = (sec: number, from = Date.now()) => nowIso(from + sec * 1000);

function jsonOf(res: OutboundResponse): unknown {
  try {
    return JSON.parse(res.body.toString('utf8'));
  } catch {
    return null;
  }
}

/** One request to the source under the outbound policy; a refused or failed fetch is a SourceError. */
export async function sourceFetch(deps: AppDeps, url: string, init: { method?: 'GET' | 'POST'; form?: Record<string, string>; token?: string } = {}) {
  try {
    return await safeFetch(url, await fetchPolicy(deps), {
      method: init.method ?? 'GET',
      timeoutMs: TIMEOUT_MS,
      maxBytes: 4 * 1024 * 1024,
      headers: {
        accept: 'application/json',
        ...(init.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
      },
      ...(init.form ? { body: new URLSearchParams(init.form).toString() } : {}),
    });
  } catch (err) {
    if (err instanceof OutboundError) throw new SourceError(`${url.slice(0, 300)} could not be fetched: ${err.message}`);
    throw err;
  }
}

async function discover(deps: AppDeps, base: string): Promise<z.infer<typeof Discovery>> {
  const res = await sourceFetch(deps, `${base}/.well-known/oauth-authorization-server`);
  const parsed = res.status === 200 ? Discovery.safeParse(jsonOf(res)) : null;
  if (!parsed?.success)
    throw new SourceError(`${base} is not a release source: its authorization server metadata (RFC 8414) answered ${res.status} without both endpoints`);
  return parsed.data;
}

const view = async (deps: AppDeps) => sourceView(await sourceRow(deps.db))!;

/** `POST release-source/device`: starts a device grant (any earlier connection is replaced). */
export async function startDeviceGrant(deps: AppDeps, secrets: ServerSecrets, requestedUrl: string | undefined): Promise<ReleaseSourceView> {
  const url = (requestedUrl ?? deps.config.releaseSourceUrl)?.replace(/\/+$/, '');
  if (!url) throw new ApiError('release_source_not_configured', 'Give the release source’s URL, or set PLACARD_RELEASE_SOURCE_URL');
  const now = nowIso();
  const blank = {
    url,
    device_code_sealed: null,
    user_code: null,
    verification_uri: null,
    verification_uri_complete: null,
    interval_sec: null,
    expires_at: null,
    next_poll_at: null,
    token_sealed: null,
    connected_at: null,
    checked_at: null,
    updated_at: now,
  };
  try {
    const meta = await discover(deps, url);
    const res = await sourceFetch(deps, meta.device_authorization_endpoint, { method: 'POST', form: { client_id: CLIENT_ID, scope: 'releases' } });
    const body = jsonOf(res);
    const parsed = res.status === 200 ? DeviceAnswer.safeParse(body) : null;
    if (!parsed?.success) {
      const oauth = OAuthError.safeParse(body);
      throw new SourceError(`the device authorization endpoint answered ${res.status}${oauth.success ? ` ${oauth.data.error}` : ' without a device code'}`);
    }
    const d = parsed.data;
    const interval = d.interval ?? 5; // RFC 8628 3.2: 5 s when the answer gives none
    await saveSource(deps.db, {
      ...blank,
      state: 'pending',
      device_code_sealed: secrets.seal(SEAL_PURPOSE, d.device_code),
      user_code: d.user_code,
      verification_uri: d.verification_uri,
      verification_uri_complete: d.verification_uri_complete ?? null,
      interval_sec: interval,
      expires_at: plusSec(d.expires_in),
      next_poll_at: plusSec(interval),
      error: null,
    });
  } catch (err) {
    if (!(err instanceof SourceError)) throw err;
    await saveSource(deps.db, { ...blank, state: 'failed', error: err.message });
  }
  return view(deps);
}

/** Settles the grant: the device code is forgotten. */
const settled = (state: SourceRow['state'], error: string | null) => ({
  state,
  error,
  device_code_sealed: null,
  user_code: null,
  verification_uri: null,
  verification_uri_complete: null,
  next_poll_at: null,
  updated_at: nowIso(),
});

/** `POST release-source/device/poll`: asks the token endpoint when the interval has passed; answers the state. */
export async function pollDeviceGrant(deps: AppDeps, secrets: ServerSecrets): Promise<ReleaseSourceView> {
  const row = await sourceRow(deps.db);
  if (!row) throw new ApiError('no_device_grant', 'No device authorization is under way: start one with POST /api/v1/player-releases/release-source/device');
  if (row.state !== 'pending') return sourceView(row)!; // settled: the token endpoint is not asked again
  const now = Date.now();
  if (row.expires_at && Date.parse(row.expires_at) <= now) {
    await updateSource(deps.db, settled('expired', 'The code expired before it was approved: start again'));
    return view(deps);
  }
  if (row.next_poll_at && Date.parse(row.next_poll_at) > now) return sourceView(row)!;
  // Claim this poll: a concurrent one finds next_poll_at moved and answers without asking.
  const interval = row.interval_sec ?? 5;
  if (!(await claimPoll(deps.db, row.next_poll_at, plusSec(interval, now)))) return view(deps);
  try {
    const meta = await discover(deps, row.url);
    const res = await sourceFetch(deps, meta.token_endpoint, {
      method: 'POST',
      form: { grant_type: DEVICE_GRANT, device_code: secrets.open(SEAL_PURPOSE, row.device_code_sealed!), client_id: CLIENT_ID },
    });
    const body = jsonOf(res);
    if (res.status === 200) {
      const token = TokenAnswer.safeParse(body);
      if (!token.success) throw new SourceError('the token endpoint answered 200 without an access token');
      await updateSource(deps.db, {
        ...settled('connected', null),
        token_sealed: secrets.seal(SEAL_PURPOSE, token.data.access_token),
        interval_sec: null,
        expires_at: null,
        connected_at: nowIso(),
      });
      return view(deps);
    }
    const oauth = OAuthError.safeParse(body);
    const code = oauth.success ? oauth.data.error : null;
    switch (code) {
      case 'authorization_pending':
        await updateSource(deps.db, { error: null, updated_at: nowIso() });
        break;
      case 'slow_down': // RFC 8628 3.5: this and every later poll waits 5 s more
        await updateSource(deps.db, { interval_sec: interval + 5, next_poll_at: plusSec(interval + 5, now), error: null, updated_at: nowIso() });
        break;
      case 'access_denied':
        await updateSource(deps.db, settled('denied', 'The release source’s administrator denied the request'));
        break;
      case 'expired_token':
        await updateSource(deps.db, settled('expired', 'The code expired before it was approved: start again'));
        break;
      default:
        await updateSource(deps.db, settled('failed', `The token endpoint answered ${res.status}${code ? ` ${code}` : ''}`));
    }
  } catch (err) {
    if (!(err instanceof SourceError)) throw err;
    // Unreachable for now: still pending, asked again after the interval.
    await updateSource(deps.db, { error: err.message, updated_at: nowIso() });
  }
  return view(deps);
}

/** `DELETE release-source`: forgets the grant, the token and the URL. */
export async function disconnect(deps: AppDeps): Promise<void> {
  if (!(await deleteSource(deps.db))) throw new ApiError('not_found', 'No release source is connected or connecting');
}

/** The source's URL and its token, when connected; else 409 release_source_not_connected. */
export async function connectedSource(deps: AppDeps, secrets: ServerSecrets): Promise<{ url: string; token: string }> {
  const row = await sourceRow(deps.db);
  if (row?.state !== 'connected' || !row.token_sealed) {
    throw new ApiError('release_source_not_connected', 'Connect the release source first (POST /api/v1/player-releases/release-source/device)');
  }
  return { url: row.url, token: secrets.open(SEAL_PURPOSE, row.token_sealed) };
}

/** The source refused the token (401): connect again. */
export async function tokenRefused(deps: AppDeps): Promise<void> {
  await updateSource(deps.db, { ...settled('failed', 'The release source refused the token: connect again'), token_sealed: null });
}
