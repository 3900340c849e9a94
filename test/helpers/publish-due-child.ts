/**
 * A second process for the cross-process race test (test/publishing-history.test.ts): opens the
 * data directory's database as its own app would, prints `ready`, reads the start time (ms since
 * the epoch) from a line on stdin, waits for it, then ticks the publishing scheduler every 20 ms
 * for `forMs`, and prints how many it published.
 * Usage: node --import=tsx test/helpers/publish-due-child.ts DATA_DIR FOR_MS
 */
import path from 'node:path';
import { buildApp } from '../../server/src/app.js';
import { testConfig } from '../../server/src/config.js';
import { publishDue } from '../../server/src/modules/publishing/index.js';
import { newAppDeps } from '../../server/src/platform/app-deps.js';
import { openDatabase } from '../../server/src/platform/db/database.js';
import { createLogger } from '../../server/src/platform/log.js';

const [dataDir, forMs] = process.argv.slice(2);
const database = openDatabase(path.join(dataDir!, 'placard.db'));
const deps = newAppDeps({ config: testConfig(dataDir!), db: database.db, logger: createLogger('silent') });
buildApp(deps); // installs the modules, as the server does
process.stdout.write('ready\n');
const startAt = await new Promise<number>((resolve) => process.stdin.once('data', (d) => resolve(Number(String(d).trim()))));
process.stdin.pause();
await new Promise((r) => setTimeout(r, Math.max(0, startAt - Date.now())));
let published = 0;
const until = Date.now() + Number(forMs);
while (Date.now() < until) {
  published += await publishDue(deps);
  await new Promise((r) => setTimeout(r, 20));
}
await database.close();
process.stdout.write(`published ${published}\n`);
