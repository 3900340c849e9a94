import type { AppDeps } from '../../platform/app-deps.js';
import type { OutboundPolicy } from '../../platform/http/outbound.js';
import { cachedSettings } from '../system/index.js';

/** What the tus routes, the expiry task and the capabilities route enforce right now. */
export interface UploadLimits {
  /** Largest upload accepted: min(PLACARD_UPLOAD_MAX_BYTES, settings uploads.maxSizeBytes). */
  maxBytes: number;
  /** PLACARD_UPLOAD_MAX_BYTES: the process's hard cap; the setting decides below it. */
  hardCapBytes: number;
  /** A partial upload untouched this long is discarded: min(PLACARD_UPLOAD_EXPIRY_HOURS, settings uploads.abandonAfterHours). */
  expiryMs: number;
}

/**
 * The effective upload limits. The environment caps, the setting (console) decides within
 * the cap (docs/media.md). Reads the cached settings: this runs on every tus request.
 */
export async function uploadLimits(deps: Pick<AppDeps, 'config' | 'db'>): Promise<UploadLimits> {
  const settings = await cachedSettings(deps.db);
  return {
    maxBytes: Math.min(deps.config.uploadMaxBytes, settings.uploads.maxSizeBytes),
    hardCapBytes: deps.config.uploadMaxBytes,
    expiryMs: Math.min(deps.config.uploadExpiryMs, settings.uploads.abandonAfterHours * 3_600_000),
  };
}

/**
 * The policy of server-side fetches of user URLs (website diagnostics). Private LAN targets
 * are allowed only when both PLACARD_FETCH_ALLOW_PRIVATE (the environment can forbid) and
 * the setting network.allowPrivateFetchTargets (the console decides within) say so.
 */
export async function fetchPolicy(deps: Pick<AppDeps, 'config' | 'db'>): Promise<OutboundPolicy> {
  const settings = await cachedSettings(deps.db);
  return { allowPrivate: deps.config.fetchAllowPrivate && settings.network.allowPrivateFetchTargets, allowLoopback: deps.config.fetchAllowLoopback };
}
