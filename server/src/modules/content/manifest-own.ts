/**
 * Whether anything reaches a screen by its own id (issue 24, docs/decisions.md "One manifest
 * build per shared context"): a schedule or playlist assignment naming the screen, a takeover,
 * override or alert window targeting it, an overlay targeting it, or an update offered to it.
 * A screen with none of these gets exactly the manifest of any other screen of its context
 * (zone, location, groups, display size) apart from its id and revision, so manifest.ts may
 * serve it the context's shared build; any of them and it gets a build of its own.
 *
 * Schedules and assignments, and the window and overlay providers that can say which screens
 * they may name directly (takeovers, plugins): read once per content change count (every
 * change to them is announced with contentChanged, which counts one), a set of screen ids.
 * A provider that cannot say, and the update offer (the screens module's seam answers one
 * screen at a time), are asked per screen with the screen alone as the target.
 */
import type { AppDeps } from '../../platform/app-deps.js';
import { ScopeKey } from '../../platform/app-scope.js';
import { updateOfferOf } from '../screens/index.js';
import { contentChangeCount } from './changes.js';
import { DEFAULT_BOX } from './manifest.builder.js';
import { screensNamedDirectly } from './manifest.repo.js';
import { overlaySource, screensTargetedByOverlays } from './overlays.js';
import type { ScreenContext } from './screen-context.js';
import { screensTargetedByWindows, type WindowTarget, windowSource } from './windows.js';

/**
 * As of a content change count: the screens schedules and assignments name directly, and
 * those window and overlay providers say they may (null for a kind whose providers cannot
 * tell: each screen then asks them with itself as the only target).
 */
interface Named {
  ids: Set<string>;
  windowsKnown: boolean;
  overlaysKnown: boolean;
}

const NAMED = new ScopeKey('content.screens-named-directly', () => ({ count: -1, named: null as Promise<Named> | null }));

async function readNamed(deps: AppDeps): Promise<Named> {
  const ids = new Set(await screensNamedDirectly(deps.db));
  const windows = await screensTargetedByWindows(deps);
  const overlays = await screensTargetedByOverlays(deps);
  for (const id of [...(windows ?? []), ...(overlays ?? [])]) ids.add(id);
  return { ids, windowsKnown: windows !== null, overlaysKnown: overlays !== null };
}

function namedDirectly(deps: AppDeps): Promise<Named> {
  const memo = deps.scope.get(NAMED);
  const count = contentChangeCount(deps);
  if (memo.count !== count || !memo.named) {
    memo.count = count;
    const named = (memo.named = readNamed(deps));
    // A failed read is not kept.
    named.catch(() => {
      if (memo.named === named) memo.named = null;
    });
  }
  return memo.named;
}

/** True when something over [from, to) reaches the screen by its own id (see above). */
export async function hasOwnInputs(deps: AppDeps, screen: ScreenContext, from: number, to: number): Promise<boolean> {
  const named = await namedDirectly(deps);
  if (named.ids.has(screen.id)) return true;
  // The update-info seam (the screens module's) answers per screen only.
  if ((await updateOfferOf(deps, screen.id)) !== null) return true;
  const own: WindowTarget[] = [{ type: 'screen', id: screen.id }];
  if (!named.windowsKnown && (await windowSource(deps)(own, from, to)).length > 0) return true;
  if (named.overlaysKnown) return false;
  // An overlay provider answers the overlays reaching the targets; one that asks for an image,
  // records a dependency or warns for the screen alone counts too.
  let touched = false;
  const overlays = await overlaySource(deps)({
    screen: { id: screen.id, timeZone: screen.timeZone, display: screen.display ?? DEFAULT_BOX },
    targets: own,
    image: async () => {
      touched = true;
      return null;
    },
    dep: () => {
      touched = true;
    },
    warn: () => {
      touched = true;
    },
  });
  return touched || overlays.length > 0;
}
