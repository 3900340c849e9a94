import type { AppDeps } from '../../platform/app-deps.js';
import { ScopeKey } from '../../platform/app-scope.js';

/**
 * The one place weather alerts reach the takeovers module (docs/weather-alerts.md,
 * "Takeovers"). The takeovers module is wired in here (useTakeoverPort from install); until a
 * port is set, starting a takeover fails and the alert's action records why.
 */
export interface TakeoverTargets {
  all?: boolean;
  screenIds?: string[];
  groupIds?: string[];
  locationIds?: string[];
}

export interface TakeoverStart {
  message: { text: string; severity: 'info' | 'warning' | 'emergency' };
  targets: TakeoverTargets;
  endsAt?: string;
  reason: string;
}

export interface TakeoverActor {
  userId: string | null;
  label: string;
}

export interface TakeoverOrigin {
  kind: 'weather-alert';
  alertId: string;
  ruleId: string;
}

export interface TakeoverPort {
  start(input: TakeoverStart, actor: TakeoverActor, origin: TakeoverOrigin): Promise<{ id: string }>;
  end(id: string, reason: string): Promise<void>;
}

export class TakeoversUnavailableError extends Error {}

const unavailable: TakeoverPort = {
  start: () => Promise.reject(new TakeoversUnavailableError('Takeovers are not available on this server')),
  end: () => Promise.reject(new TakeoversUnavailableError('Takeovers are not available on this server')),
};

const PORT = new ScopeKey<{ port: TakeoverPort }>('weather-alerts.takeover-port', () => ({ port: unavailable }));

export function useTakeoverPort(deps: AppDeps, port: TakeoverPort): void {
  deps.scope.get(PORT).port = port;
}

export function takeoverPort(deps: AppDeps): TakeoverPort {
  return deps.scope.get(PORT).port;
}
