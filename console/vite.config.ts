import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

/**
 * `version.json` (`{"version": <package.json version>}`) beside the pages: the player reads
 * its own version from it at boot, so a web release (this build as a .tar.gz with another
 * version.json, docs/player-updates.md) reports the version it was released as.
 */
function versionFile(): Plugin {
  return {
    name: 'placard-version-json',
    apply: 'build',
    generateBundle() {
      const { version } = JSON.parse(readFileSync(here('../package.json'), 'utf8')) as { version: string };
      this.emitFile({ type: 'asset', fileName: 'version.json', source: `${JSON.stringify({ version })}\n` });
    },
  };
}

/**
 * Two pages, one build: the console (index.html, served at `/`) and the browser player
 * (play.html, served at `/play`). Output goes to console/dist, which the server serves
 * from the same port (server/src/platform/http/console.ts). Hashed files land in
 * dist/assets/ and are cached for a year; the HTML pages are revalidated every time.
 * The player page names its files relatively (`./assets/...`), and every built file names
 * the others relatively: the same build then also runs as a web release under
 * /play/v/<version>/ (docs/player-updates.md). The console page keeps `/assets/...`: its
 * routes are deep paths (/screens/123) where a relative URL would not resolve.
 */
export default defineConfig({
  root: here('.'),
  base: '/',
  publicDir: here('./public'),
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  plugins: [versionFile()],
  experimental: {
    // play.html sits at the root of dist: `./assets/...`; JS and CSS name files relative to themselves.
    renderBuiltUrl: (file, { hostType, hostId }) => (hostType !== 'html' ? { relative: true } : hostId === 'play.html' ? `./${file}` : undefined),
  },
  build: {
    outDir: here('./dist'),
    emptyOutDir: true,
    assetsDir: 'assets',
    // No source maps in the build the server serves: they would publish the sources (and
    // /play-sw.js.map the player's) to anyone; `npm run dev:console` has them for debugging.
    // The server refuses *.map anyway (server/src/platform/http/console.ts).
    sourcemap: false,
    target: 'es2022',
    rollupOptions: {
      input: {
        console: here('./index.html'),
        play: here('./play.html'),
        // The player's service worker: one stable, unhashed file at /play-sw.js (its
        // scope is /play), revalidated on every load like the HTML pages.
        'play-sw': here('./src/player/sw.ts'),
      },
      output: {
        entryFileNames: (chunk) => (chunk.name === 'play-sw' ? 'play-sw.js' : 'assets/[name]-[hash].js'),
      },
    },
  },
  server: {
    // `npx vite --config console/vite.config.ts` for hot reload against a running server.
    proxy: { '/api': { target: 'http://127.0.0.1:8080', ws: true } },
  },
});
