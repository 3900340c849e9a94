/**
 * Windows stronger than schedules (takeovers, presentation overrides, weather alerts): the
 * content module asks the providers other modules register in their install()
 * (`provideWindows`, kept in deps.scope); content itself knows nothing of takeovers. The
 * manifest, the schedule preview and now-showing pass `windowSource(deps)` to resolveSubject. The provider answers the
 * windows reaching a subject (its targets) over [from, to), already ordered strongest first
 * within a kind (resolveTimeline keeps that order after the kind's rank).
 */
import type { AppDeps } from '../../platform/app-deps.js';
import { ScopeKey } from '../../platform/app-scope.js';
import type { Db } from '../../platform/db/database.js';
import type { WindowSource } from '../schedules/index.js';

export interface ProvidedWindow extends WindowSource {
  /** A message window's text and severity (content.type 'message'). */
  message: { text: string; severity: 'info' | 'warning' | 'emergency' } | null;
  audio: 'force-on' | 'default';
  /** Its name in previews (the reason it was started, or the message). */
  name: string | null;
}

export type WindowTarget = { type: 'screen' | 'group' | 'location'; id: string };
export type WindowProvider = (db: Db, targets: readonly WindowTarget[], from: number, to: number) => Promise<ProvidedWindow[]>;

const PROVIDERS = new ScopeKey('content.window-providers', (): WindowProvider[] => []);

/**
 * Every screen a provider's windows may name by its own id (a superset will do: such a screen
 * gets a manifest build of its own, manifest-own.ts). Its answer may change only with a change
 * announced through contentChanged.
 */
export type ScreensTargetedFn = (db: Db) => Promise<string[]>;

const TARGETED = new ScopeKey('content.window-screens-targeted', () => ({ fns: [] as ScreensTargetedFn[], unknown: 0 }));

/**
 * A module with windows registers its provider here, in its install(), with the screens it
 * may target directly when it can tell (without: every screen asks the provider on its own).
 */
export function provideWindows(deps: AppDeps, provider: WindowProvider, screensTargeted?: ScreensTargetedFn): void {
  deps.scope.get(PROVIDERS).push(provider);
  const targeted = deps.scope.get(TARGETED);
  if (screensTargeted) targeted.fns.push(screensTargeted);
  else targeted.unknown++;
}

/** The screens any provider's windows may name directly, or null when a provider cannot tell. */
export async function screensTargetedByWindows(deps: AppDeps): Promise<string[] | null> {
  const { fns, unknown } = deps.scope.get(TARGETED);
  if (unknown > 0) return null;
  const out: string[] = [];
  for (const fn of fns) out.push(...(await fn(deps.db)));
  return out;
}

/** The windows for a subject's targets, as resolveSubject asks them (ResolveOptions.windows). */
export type WindowSourceFn = (targets: readonly WindowTarget[], from: number, to: number) => Promise<ProvidedWindow[]>;

/** This app's providers together, reading `db` (none registered: no windows). */
export function windowSource(deps: AppDeps, db: Db = deps.db): WindowSourceFn {
  const providers = deps.scope.get(PROVIDERS);
  return async (targets, from, to) => {
    const out: ProvidedWindow[] = [];
    for (const p of providers) out.push(...(await p(db, targets, from, to)));
    return out;
  };
}
