/**
 * Whether anything reaches a screen by its own id (issue 24, docs/decisions.md "One manifest
 * build per shared context"): a schedule or playlist assignment naming the screen, a takeover,
 * override or alert window targeting it, an overlay targeting it, or an update offered to it.
 * A screen with none of these gets exactly the manifest of any other screen of its context
 * (zone, location, groups, display size) apart from its id and revision, so manifest.ts may
 * serve it the context's shared build; any of them and it gets a build of its own.
 *
 * Schedules and assignments: one query per content change count (every change to them is
 * announced with contentChanged, which counts one), answering every screen named directly.
 * Windows, overlays and offers belong to other modules: asked through their seams with the
 * screen alone as the target.
 */
import type { AppDeps } from '../../platform/app-deps.js';
import { ScopeKey } from '../../platform/app-scope.js';
import { updateOfferOf } from '../screens/index.js';
import { contentChangeCount } from './changes.js';
import { DEFAULT_BOX } from './manifest.builder.js';
import { screensNamedDirectly } from './manifest.repo.js';
import { overlaySource } from './overlays.js';
import type { ScreenContext } from './screen-context.js';
import { type WindowTarget, windowSource } from './windows.js';

/** The screens schedules and assignments name directly, as of a content change count. */
const NAMED = new ScopeKey('content.screens-named-directly', () => ({ count: -1, ids: null as Promise<Set<string>> | null }));

async function namedDirectly(deps: AppDeps): Promise<Set<string>> {
  const memo = deps.scope.get(NAMED);
  const count = contentChangeCount(deps);
  if (memo.count !== count || !memo.ids) {
    memo.count = count;
    const ids = (memo.ids = screensNamedDirectly(deps.db).then((list) => new Set(list)));
    // A failed read is not kept.
    ids.catch(() => {
      if (memo.ids === ids) memo.ids = null;
    });
  }
  return memo.ids;
}

/** True when something over [from, to) reaches the screen by its own id (see above). */
export async function hasOwnInputs(deps: AppDeps, screen: ScreenContext, from: number, to: number): Promise<boolean> {
  if ((await namedDirectly(deps)).has(screen.id)) return true;
  if ((await updateOfferOf(deps, screen.id)) !== null) return true;
  const own: WindowTarget[] = [{ type: 'screen', id: screen.id }];
  if ((await windowSource(deps)(own, from, to)).length > 0) return true;
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
