import { z } from 'zod';
import type { Db } from '../../platform/db/database.js';
import { groupPoliciesOfScreen } from './groups.repo.js';
import { DEFAULT_HEARTBEAT_INTERVAL_SEC, screenPolicyRow } from './screens.repo.js';

const HHMM = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'HH:MM, 24-hour');

/**
 * A policy document: every key optional. Set on groups and on screens; the effective
 * policy of a screen merges defaults < groups < the screen's own (see effectivePolicy).
 */
export const PolicyDocument = z
  .strictObject({
    heartbeatIntervalSec: z.number().int().min(10).max(3600).optional(),
    volumePercent: z.number().int().min(0).max(100).optional(),
    screenshotsEnabled: z.boolean().optional(),
    displayControlEnabled: z.boolean().optional(),
    noiseMeterEnabled: z.boolean().optional(),
    cacheLimitMb: z.number().int().min(64).max(1_048_576).optional(),
    logLevel: z.enum(['error', 'warn', 'info', 'debug']).optional(),
    dailyRestartAt: HHMM.nullable().optional(),
    offlinePlaybackHours: z.number().int().min(1).max(168).optional(),
  })
  .meta({ id: 'PolicyDocument' });
export type PolicyDocument = z.infer<typeof PolicyDocument>;
export type PolicyKey = keyof PolicyDocument;

export const POLICY_DEFAULTS: Required<PolicyDocument> = {
  heartbeatIntervalSec: DEFAULT_HEARTBEAT_INTERVAL_SEC,
  volumePercent: 100,
  screenshotsEnabled: true,
  displayControlEnabled: true,
  noiseMeterEnabled: false,
  cacheLimitMb: 4096,
  logLevel: 'info',
  dailyRestartAt: null,
  offlinePlaybackHours: 48,
};

export const PolicySource = z.object({ type: z.enum(['default', 'group', 'screen']), id: z.string().nullable(), name: z.string().nullable() });
export type PolicySource = z.infer<typeof PolicySource>;

export const EffectivePolicy = z
  .object({
    values: z.record(z.string(), z.unknown()),
    sources: z.record(z.string(), PolicySource),
    layers: z.array(z.object({ source: PolicySource, policy: z.record(z.string(), z.unknown()) })),
  })
  .meta({ id: 'EffectivePolicy' });
export type EffectivePolicy = {
  values: Required<PolicyDocument>;
  sources: Record<PolicyKey, PolicySource>;
  layers: { source: PolicySource; policy: PolicyDocument }[];
};

export function parsePolicy(text: string | null): PolicyDocument | null {
  if (!text) return null;
  const parsed = PolicyDocument.safeParse(JSON.parse(text));
  return parsed.success ? parsed.data : null;
}

/** Parsed policy documents by their text: a few distinct texts, read on every heartbeat. */
const parsedPolicies = new Map<string, PolicyDocument | null>();
const PARSED_POLICIES_KEPT = 1000;

/** parsePolicy, remembered by text (the document answered is shared: read it, never change it). */
function parsedPolicy(text: string | null): PolicyDocument | null {
  if (!text) return null;
  let p = parsedPolicies.get(text);
  if (p === undefined) {
    p = parsePolicy(text);
    if (parsedPolicies.size >= PARSED_POLICIES_KEPT) parsedPolicies.clear();
    parsedPolicies.set(text, p);
  }
  return p;
}

/**
 * One value of a screen's effective policy from its layers' texts: the screen's own policy,
 * then its groups' first-sorting first (by name, then id), then the default. The same
 * precedence as effectivePolicy, for the heartbeat, which reads the texts with the screen's
 * row (one query) and needs only its interval.
 */
export function effectivePolicyValue<K extends PolicyKey>(key: K, own: string | null, groups: readonly (string | null)[]): Required<PolicyDocument>[K] {
  const mine = parsedPolicy(own)?.[key];
  if (mine !== undefined) return mine as Required<PolicyDocument>[K];
  for (const g of groups) {
    const v = parsedPolicy(g)?.[key];
    if (v !== undefined) return v as Required<PolicyDocument>[K];
  }
  return POLICY_DEFAULTS[key];
}

/**
 * The screen's effective policy with the source of every value. Precedence, weakest
 * first: built-in defaults, then the screen's groups (when groups disagree, the group
 * whose name sorts first wins, so the outcome is stable and visible), then the screen's
 * own policy.
 */
export async function effectivePolicy(db: Db, screenId: string): Promise<EffectivePolicy> {
  const screen = await screenPolicyRow(db, screenId);
  const groups = await groupPoliciesOfScreen(db, screenId);
  const values = { ...POLICY_DEFAULTS } as Record<string, unknown>;
  const sources = {} as Record<string, PolicySource>;
  for (const k of Object.keys(POLICY_DEFAULTS)) sources[k] = { type: 'default', id: null, name: null };
  const layers: EffectivePolicy['layers'] = [];
  // Groups from the last-sorting to the first, so the first-sorting group applies last and wins.
  for (const g of [...groups].reverse()) {
    const p = parsedPolicy(g.policy);
    if (!p) continue;
    const source: PolicySource = { type: 'group', id: g.id, name: g.name };
    layers.unshift({ source, policy: p });
    for (const [k, v] of Object.entries(p)) {
      if (v === undefined) continue;
      values[k] = v;
      sources[k] = source;
    }
  }
  const own = parsedPolicy(screen?.policy ?? null);
  if (own && screen) {
    const source: PolicySource = { type: 'screen', id: screen.id, name: screen.name };
    layers.push({ source, policy: own });
    for (const [k, v] of Object.entries(own)) {
      if (v === undefined) continue;
      values[k] = v;
      sources[k] = source;
    }
  }
  return { values: values as Required<PolicyDocument>, sources: sources as Record<PolicyKey, PolicySource>, layers };
}
