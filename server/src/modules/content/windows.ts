/**
 * Windows stronger than schedules (takeovers, presentation overrides, weather alerts): the
 * content module asks a provider that another module registers in its install()
 * (`provideWindows`); content itself knows nothing of takeovers. The provider answers the
 * windows reaching a subject (its targets) over [from, to), already ordered strongest first
 * within a kind (resolveTimeline keeps that order after the kind's rank).
 */
import type { AppDeps } from '../../platform/app-deps.js';
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

/**
 * Providers by database: resolveSubject is given a Db (not the app), and each app has its own
 * database handle, so keying by it keeps apps apart like deps.scope does.
 */
const PROVIDERS = new WeakMap<object, WindowProvider[]>();

/** A module with windows registers its provider here, in its install(). */
export function provideWindows(deps: AppDeps, provider: WindowProvider): void {
  const list = PROVIDERS.get(deps.db) ?? [];
  list.push(provider);
  PROVIDERS.set(deps.db, list);
}

/** Every registered provider's windows for the targets (none when nothing is registered). */
export async function windowsFor(db: Db, targets: readonly WindowTarget[], from: number, to: number): Promise<ProvidedWindow[]> {
  const out: ProvidedWindow[] = [];
  for (const p of PROVIDERS.get(db) ?? []) out.push(...(await p(db, targets, from, to)));
  return out;
}
