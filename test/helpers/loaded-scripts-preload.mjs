// Loaded with `node --import` into the built server by test/startup-packages.test.ts: records
// the URL of every script V8 compiles (inspector; those parsed before it was enabled too) and,
// on SIGUSR2, writes them as a JSON array to $LOADED_SCRIPTS_FILE. The server knows nothing of it.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const out = process.env.LOADED_SCRIPTS_FILE;
if (out) {
  const session = new Session();
  session.connect();
  const urls = new Set();
  session.on('Debugger.scriptParsed', (m) => urls.add(m.params.url));
  session.post('Debugger.enable');
  process.on('SIGUSR2', () => writeFileSync(out, JSON.stringify([...urls])));
}
