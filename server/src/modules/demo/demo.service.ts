import { z } from 'zod';
import type { AppDeps } from '../../platform/app-deps.js';
import { ScopeKey } from '../../platform/app-scope.js';
import { ApiError } from '../../platform/http/errors.js';
import { mediaServiceOf, type MediaService } from '../media/index.js';
import { countAndNames, readMeta, writeMeta } from './demo.repo.js';
import { META_LAST_RESET_AT, META_SEEDED_AT, seedDemo, wipeDemo } from './seed.js';

export const RESET_ROLES = ['owner', 'admin'] as const;

/** One app's demo runtime: the seed or reset under way (one at a time), the last failure. */
interface DemoRuntime {
  media: MediaService;
  running: Promise<void> | null;
  lastError: string | null;
  abort: AbortController;
  /** Settles once the start-up check decided whether to seed (GET waits for it, so `seeding` is never a guess). */
  decided: Promise<void>;
}
const RUNTIME = new ScopeKey<{ runtime?: DemoRuntime }>('demo.runtime', () => ({}));

/** Runs `work` as the one seed/reset of this app; a second one meanwhile is 409. */
function exclusive(deps: AppDeps, runtime: DemoRuntime, what: string, work: () => Promise<void>): Promise<void> {
  if (runtime.running) throw new ApiError('conflict', 'The demo data is being seeded or reset right now; try again when GET /api/v1/demo says seeding: false');
  const run = (async () => {
    try {
      await work();
      runtime.lastError = null;
    } catch (err) {
      if (!runtime.abort.signal.aborted) {
        deps.logger.error({ err }, `demo ${what} failed`);
        runtime.lastError = `The demo ${what} failed: ${err instanceof Error ? err.message : String(err)}`.slice(0, 500);
      }
      throw err;
    }
  })().finally(() => {
    runtime.running = null;
  });
  runtime.running = run;
  return run;
}

/**
 * Wires demo mode into an app (buildApp calls it after the media module): when
 * PLACARD_DEMO is on and the `meta` table says the demo was never seeded, the seed runs in
 * the background (the server answers /healthz meanwhile; GET /api/v1/demo says seeding).
 */
export function installDemo(deps: AppDeps): void {
  const media = mediaServiceOf(deps);
  if (!media) throw new Error('the demo module installs after the media module');
  const runtime: DemoRuntime = { media, running: null, lastError: null, abort: new AbortController(), decided: Promise.resolve() };
  deps.scope.get(RUNTIME).runtime = runtime;
  deps.periodic.onStop(async () => {
    runtime.abort.abort();
    await runtime.running?.catch(() => {});
  });
  if (!deps.config.demo) return;
  runtime.decided = (async () => {
    try {
      if (await readMeta(deps.db, META_SEEDED_AT)) return;
    } catch (err) {
      deps.logger.error({ err }, 'demo: could not read the meta table');
      return;
    }
    exclusive(deps, runtime, 'seed', async () => {
      await seedDemo(deps, media, runtime.abort.signal);
      await writeMeta(deps.db, META_SEEDED_AT, new Date().toISOString());
      deps.logger.info('demo data seeded');
    }).catch(() => {}); // logged by exclusive(); GET /demo shows lastError
  })();
}

const Named = z.object({ count: z.number().int(), names: z.array(z.string()).describe('sorted by name; at most 50') });
export const DemoStatus = z
  .object({
    enabled: z.boolean().describe('PLACARD_DEMO is on'),
    seeding: z.boolean().describe('a seed or reset is running'),
    seededAt: z.string().nullable().describe('when the demo data was first seeded'),
    lastResetAt: z.string().nullable(),
    lastError: z.string().nullable().describe('why the last seed or reset failed, if it did'),
    contents: z
      .object({ screens: Named, locations: Named, groups: Named, assets: Named, playlists: Named, layouts: Named, schedules: Named })
      .nullable()
      .describe('what the server holds now (null when demo mode is off: nothing is disclosed)'),
    resetsAllowedFor: z.array(z.enum(RESET_ROLES)),
  })
  .meta({ id: 'DemoStatus' });
export type DemoStatus = z.infer<typeof DemoStatus>;

export async function demoStatus(deps: AppDeps): Promise<DemoStatus> {
  const runtime = deps.scope.get(RUNTIME).runtime;
  const enabled = deps.config.demo;
  const db = deps.db;
  await runtime?.decided;
  return {
    enabled,
    seeding: enabled && Boolean(runtime?.running),
    seededAt: enabled ? await readMeta(db, META_SEEDED_AT) : null,
    lastResetAt: enabled ? await readMeta(db, META_LAST_RESET_AT) : null,
    lastError: enabled ? (runtime?.lastError ?? null) : null,
    contents: enabled
      ? {
          screens: await countAndNames(db, 'screens'),
          locations: await countAndNames(db, 'locations'),
          groups: await countAndNames(db, 'screen_groups'),
          assets: await countAndNames(db, 'assets'),
          playlists: await countAndNames(db, 'playlists'),
          layouts: await countAndNames(db, 'layouts'),
          schedules: await countAndNames(db, 'schedules'),
        }
      : null,
    resetsAllowedFor: [...RESET_ROLES],
  };
}

/** Wipes the venue content and seeds the demo again (demo mode only); 409 when it is off or a seed or reset runs. */
export async function resetDemo(deps: AppDeps): Promise<void> {
  if (!deps.config.demo) throw new ApiError('conflict', 'Demo mode is off on this server (start it with PLACARD_DEMO=1); nothing was reset');
  const runtime = deps.scope.get(RUNTIME).runtime!;
  await exclusive(deps, runtime, 'reset', async () => {
    await wipeDemo(deps, runtime.media);
    await seedDemo(deps, runtime.media, runtime.abort.signal);
    const at = new Date().toISOString();
    await writeMeta(deps.db, META_LAST_RESET_AT, at);
    if (!(await readMeta(deps.db, META_SEEDED_AT))) await writeMeta(deps.db, META_SEEDED_AT, at);
  });
}
