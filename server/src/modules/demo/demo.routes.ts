import { defineRoute, ok } from '../../platform/http/route.js';
import { DemoStatus, demoStatus, resetDemo } from './demo.service.js';

const TAGS = ['Demo'];

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
      await resetDemo(ctx.deps);
      return ok(await demoStatus(ctx.deps));
    },
  }),
];
