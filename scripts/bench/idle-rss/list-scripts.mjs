// `npm run bench:idle-rss -- --modules`: loaded with `node --import` before the server, it
// records every script V8 compiles (through the inspector) and on SIGUSR2 writes, as JSON to
// $IDLE_RSS_SCRIPTS, the count and source bytes per npm package (node: builtins and the
// server's own files grouped). The inspector keeps its own data, so memory figures of such
// a run are not the plain server's: the bench measures them in runs without this file.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const out = process.env.IDLE_RSS_SCRIPTS;
if (out) {
  const session = new Session();
  session.connect();
  const scripts = [];
  session.on('Debugger.scriptParsed', (m) => scripts.push({ url: m.params.url, bytes: m.params.length ?? 0 }));
  session.post('Debugger.enable');
  process.on('SIGUSR2', () => {
    const groups = {};
    for (const { url, bytes } of scripts) {
      const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
      const key = pkg ?? (url.startsWith('node:') ? 'node: (builtins)' : /\/dist(-modules)?\/server\//.test(url) ? '(placard dist/server)' : '(other)');
      groups[key] ??= { scripts: 0, bytes: 0 };
      groups[key].scripts++;
      groups[key].bytes += bytes;
    }
    writeFileSync(out, JSON.stringify(groups));
  });
}
