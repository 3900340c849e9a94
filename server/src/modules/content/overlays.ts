/**
 * Overlays drawn above the content (DESIGN.md section 11; docs/plugins.md): the content module
 * asks the providers other modules register in their install() (`provideOverlays`, kept in
 * deps.scope), as it asks window providers (windows.ts); content knows nothing of plugins.
 * A provider answers the overlay entries reaching a screen's targets; the images it needs
 * (a brand bug's logo) it asks through the context, which adds their variant to the
 * manifest's `media[]` and records the asset as a dependency of the screen's manifest.
 */
import type { AppDeps } from '../../platform/app-deps.js';
import { ScopeKey } from '../../platform/app-scope.js';
import type { Db } from '../../platform/db/database.js';
import type { DepRef } from './changes.js';
import type { ManifestMedia, ManifestOverlay } from './manifest.shapes.js';
import type { Warning } from './playable.js';
import type { ScreensTargetedFn, WindowTarget } from './windows.js';

export type { ManifestOverlay } from './manifest.shapes.js';

/** What a provider may use while the manifest is built. */
export interface OverlayContext {
  screen: { id: string; timeZone: string; display: { width: number; height: number } };
  /** The screen, its groups and its location. */
  targets: readonly WindowTarget[];
  /**
   * The player variant of an image asset for a box (added to `media[]`; the asset recorded as
   * a dependency so its change bumps the screen), or null with a warning (`source` added to it)
   * when it is missing, not ready or not an image.
   */
  image(assetId: string, box: { width: number; height: number }, source: Record<string, unknown>): Promise<ManifestMedia | null>;
  /** Records a dependency of the screen's manifest. */
  dep(kind: DepRef['kind'], id: string): void;
  warn(warning: Warning): void;
}

export type OverlayProvider = (db: Db, ctx: OverlayContext) => Promise<ManifestOverlay[]>;

const PROVIDERS = new ScopeKey('content.overlay-providers', (): OverlayProvider[] => []);
const TARGETED = new ScopeKey('content.overlay-screens-targeted', () => ({ fns: [] as ScreensTargetedFn[], unknown: 0 }));

/**
 * A module with overlays registers its provider here, in its install(), with the screens its
 * overlays may target directly when it can tell (windows.ts `ScreensTargetedFn`).
 */
export function provideOverlays(deps: AppDeps, provider: OverlayProvider, screensTargeted?: ScreensTargetedFn): void {
  deps.scope.get(PROVIDERS).push(provider);
  const targeted = deps.scope.get(TARGETED);
  if (screensTargeted) targeted.fns.push(screensTargeted);
  else targeted.unknown++;
}

/** The screens any provider's overlays may name directly, or null when a provider cannot tell. */
export async function screensTargetedByOverlays(deps: AppDeps): Promise<string[] | null> {
  const { fns, unknown } = deps.scope.get(TARGETED);
  if (unknown > 0) return null;
  const out: string[] = [];
  for (const fn of fns) out.push(...(await fn(deps.db)));
  return out;
}

export type OverlaySourceFn = (ctx: OverlayContext) => Promise<ManifestOverlay[]>;

/** This app's providers together, reading `db` (none registered: no overlays). */
export function overlaySource(deps: AppDeps, db: Db = deps.db): OverlaySourceFn {
  const providers = deps.scope.get(PROVIDERS);
  return async (ctx) => {
    const out: ManifestOverlay[] = [];
    for (const p of providers) out.push(...(await p(db, ctx)));
    return out;
  };
}
