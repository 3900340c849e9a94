import { z } from 'zod';
import type { AppDeps } from '../../platform/app-deps.js';
import { ScopeKey } from '../../platform/app-scope.js';
import type { Db } from '../../platform/db/database.js';
import { ApiError } from '../../platform/http/errors.js';
import { defineRoute, ok } from '../../platform/http/route.js';
import { mediaServiceOf, type MediaService } from '../media/index.js';
import { META_LAST_RESET_AT, META_SEEDED_AT, seedDemo, wipeDemo } from './seed.js';

const TAGS = ['Demo'];
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

async function readMeta(db: Db, key: string): Promise<string | null> {
  return (await db.selectFrom('meta').select('value').where('key', '=', key).executeTakeFirst())?.value ?? null;
}
async function writeMeta(db: Db, key: string, value: string): Promise<void> {
  await db
    .insertInto('meta')
    .values({ key, value })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
    .execute();
}

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
const DemoStatus = z
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
type DemoStatus = z.infer<typeof DemoStatus>;

async function named(db: Db, table: 'screens' | 'locations' | 'screen_groups' | 'assets' | 'playlists' | 'layouts' | 'schedules') {
  const count = await db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  const rows = await db.selectFrom(table).select('name').orderBy('name').orderBy('id').limit(50).execute();
  return { count: Number(count.n), names: rows.map((r) => r.name) };
}

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
          screens: await named(db, 'screens'),
          locations: await named(db, 'locations'),
          groups: await named(db, 'screen_groups'),
          assets: await named(db, 'assets'),
          playlists: await named(db, 'playlists'),
          layouts: await named(db, 'layouts'),
          schedules: await named(db, 'schedules'),
        }
      : null,
    resetsAllowedFor: [...RESET_ROLES],
  };
}

export const demoRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/demo',
    auth: 'public',
    tags: TAGS,
    summary: 'Whether demo mode is on and what the demo data set holds',
    description:
      'Public: the sign-in page shows a demo banner before anyone signs in. With demo mode off it answers `enabled: false` and discloses nothing else.',
    responses: { 200: { description: 'Demo status', data: DemoStatus } },
    handler: async (ctx) => ok(await demoStatus(ctx.deps)),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/demo/reset',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Restore the demo data set (demo mode only)',
    description:
      'Removes the venue content (screens, groups, locations, assets and their files, library folders/collections/tags, playlists, layouts, schedules, assignments, pairing sessions, commands) and seeds the demo data again; users, sessions, tokens and settings stay. Answers when the data is back (new assets are still `processing`; their thumbnails follow). 409 `conflict` when demo mode is off or a seed/reset is already running.',
    responses: {
      200: { description: 'The demo status after the reset', data: DemoStatus },
      409: { description: 'conflict: demo mode is off (PLACARD_DEMO), or a seed or reset is running' },
    },
    handler: async (ctx) => {
      const deps = ctx.deps;
      if (!deps.config.demo) throw new ApiError('conflict', 'Demo mode is off on this server (start it with PLACARD_DEMO=1); nothing was reset');
      const runtime = deps.scope.get(RUNTIME).runtime!;
      await exclusive(deps, runtime, 'reset', async () => {
        await wipeDemo(deps, runtime.media);
        await seedDemo(deps, runtime.media, runtime.abort.signal);
        const at = new Date().toISOString();
        await writeMeta(deps.db, META_LAST_RESET_AT, at);
        if (!(await readMeta(deps.db, META_SEEDED_AT))) await writeMeta(deps.db, META_SEEDED_AT, at);
      });
      return ok(await demoStatus(deps));
    },
  }),
];
