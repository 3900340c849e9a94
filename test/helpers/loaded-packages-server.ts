// The real server (main() of server/src/main.ts) with one extra route answering which npm
// packages this process has loaded so far, from the scripts V8 compiled (the inspector
// reports every script, those parsed before it was enabled too). Run by
// test/startup-packages.test.ts through startServerProcess(..., { script: 'test/helpers/loaded-packages-server.ts' }).
import { Session } from 'node:inspector';
import { z } from 'zod';
import { main } from '../../server/src/main.js';
import { defineRoute, ok } from '../../server/src/platform/http/route.js';

const session = new Session();
session.connect();
const packages = new Set<string>();
session.on('Debugger.scriptParsed', (m) => {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(m.params.url)?.[1];
  if (pkg) packages.add(pkg);
});
session.post('Debugger.enable');

const Loaded = z.object({ packages: z.array(z.string()) });

await main({
  extraRoutes: [
    defineRoute({
      method: 'GET',
      path: '/api/v1/test-startup/packages',
      auth: 'public',
      tags: ['Test'],
      summary: 'The npm packages loaded in this process so far',
      responses: { 200: { description: 'package names', data: Loaded } },
      handler: () => ok({ packages: [...packages].sort() }),
    }),
  ],
});
