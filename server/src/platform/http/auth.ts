import type { Context } from 'koa';
import { ApiError } from './errors.js';

/** Console roles, strongest first (DESIGN.md section 4). */
export const ROLES = ['owner', 'admin', 'publisher', 'editor', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

/** True when `role` is at least as strong as `needed`. */
export function roleAtLeast(role: Role, needed: Role): boolean {
  return ROLES.indexOf(role) <= ROLES.indexOf(needed);
}

/** The only capabilities an integration token can carry (spec section 5). */
export const CAPABILITIES = ['manual_table_rows:write', 'fleet_health:read'] as const;
export type Capability = (typeof CAPABILITIES)[number];

/**
 * What a route accepts. Every route declares one or more; `public` needs nothing.
 * `integration:<capability>` accepts an integration token carrying that capability.
 */
export type AuthKind = 'public' | 'session' | 'device' | `integration:${Capability}`;

/** For routes built outside the type checker's sight (plain JS, generated): is this a kind we know? */
export function isAuthKind(value: unknown): value is AuthKind {
  if (value === 'public' || value === 'session' || value === 'device') return true;
  return typeof value === 'string' && value.startsWith('integration:') && (CAPABILITIES as readonly string[]).includes(value.slice('integration:'.length));
}

export type SessionPrincipal = { kind: 'session'; userId: string; role: Role; sessionId: string };
export type DevicePrincipal = { kind: 'device'; screenId: string; credentialId: string };
/** `dataSourceIds`: the manual tables a `manual_table_rows:write` token was granted (read when it authenticates). */
export type IntegrationPrincipal = { kind: 'integration'; tokenId: string; capabilities: readonly Capability[]; dataSourceIds: readonly string[] };
export type Principal = { kind: 'anonymous' } | SessionPrincipal | DevicePrincipal | IntegrationPrincipal;

/**
 * Resolvers the feature modules install. Each answers the principal for the credential
 * the request carries, or throws an ApiError (invalid_credential, credential_revoked,
 * csrf_failed, ...). `session` answers null when the request has no live session.
 */
export interface Authenticators {
  session?: (ctx: Context) => Promise<SessionPrincipal | null>;
  /** `idOnly`: the route needs the principal only (RouteDef.deviceIdOnly), not the screen's row. */
  device?: (ctx: Context, token: string, idOnly: boolean) => Promise<DevicePrincipal>;
  integration?: (ctx: Context, token: string) => Promise<IntegrationPrincipal>;
}

export const DEVICE_TOKEN_PREFIX = 'svc_device_';
export const INTEGRATION_TOKEN_PREFIX = 'svci_';

type Presented = { kind: 'session' } | { kind: 'device'; token: string } | { kind: 'integration'; token: string };

/** Which kind of credential the request presents; a bearer of no known kind is invalid. */
export function presentedCredential(ctx: Context): Presented {
  const header = ctx.get('authorization');
  if (!header) return { kind: 'session' };
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  const token = match?.[1];
  if (token?.startsWith(DEVICE_TOKEN_PREFIX)) return { kind: 'device', token };
  if (token?.startsWith(INTEGRATION_TOKEN_PREFIX)) return { kind: 'integration', token };
  throw new ApiError('invalid_credential', 'The Authorization header does not carry a credential this server issues');
}

function describe(kinds: readonly AuthKind[]): string {
  const names = new Set(
    kinds.map((k) => (k.startsWith('integration:') ? 'an integration token' : k === 'device' ? 'a device credential' : 'a console session')),
  );
  return [...names].join(' or ');
}

/**
 * Central enforcement: runs for every route before validation. A credential of a kind
 * the route does not accept is 401; a missing capability or role is 403.
 */
export async function authenticate(
  ctx: Context,
  kinds: readonly AuthKind[],
  minRole: Role | undefined,
  authenticators: Authenticators,
  deviceIdOnly = false,
): Promise<Principal> {
  if (kinds.includes('public')) return { kind: 'anonymous' };
  const presented = presentedCredential(ctx);
  const unauthenticated = () => new ApiError('unauthenticated', `This route needs ${describe(kinds)}`);

  switch (presented.kind) {
    case 'session': {
      if (!kinds.includes('session') || !authenticators.session) throw unauthenticated();
      const principal = await authenticators.session(ctx);
      if (!principal) throw unauthenticated();
      if (minRole && !roleAtLeast(principal.role, minRole)) {
        throw new ApiError('forbidden', `This needs the ${minRole} role or a stronger one`);
      }
      return principal;
    }
    case 'device': {
      if (!kinds.includes('device') || !authenticators.device) throw unauthenticated();
      return authenticators.device(ctx, presented.token, deviceIdOnly);
    }
    case 'integration': {
      const needed = kinds.filter((k) => k.startsWith('integration:')).map((k) => k.slice('integration:'.length));
      if (needed.length === 0 || !authenticators.integration) throw unauthenticated();
      const principal = await authenticators.integration(ctx, presented.token);
      if (!needed.some((c) => principal.capabilities.includes(c as Capability))) {
        throw new ApiError('forbidden', `This token lacks the capability ${needed.join(' or ')}`);
      }
      return principal;
    }
  }
}
