// The server's build (`npm run build:server`): server/src/main.ts and cli.ts bundled by esbuild
// into dist/server/src/{main,cli}.js (the paths systemd/placard.service, packaging/ and
// install.sh start), ESM, with code splitting so every `await import()` of the source stays a
// chunk (dist/server/src/chunks/) loaded at its first use (test/startup-packages.test.ts).
// Why a bundle, and the choices below: docs/performance.md, "Idle memory, a bundled build".
//
// - Packages with native addons or that locate files next to themselves stay external
//   (EXTERNAL: loaded from node_modules, which the release ships).
// - Whitespace and syntax are minified (V8 keeps every loaded script's source on the heap),
//   identifiers are not: stack traces and logs keep function names. No keepNames (its
//   `__name()` call per function cost ~3 MiB of heap): a name two modules share gets a
//   suffix in the bundle (`reply2`). Linked source maps (files only; `node --enable-source-maps`
//   maps a stack trace back to server/src).
// - The unbundled tsc build stays available for comparison: `npm run build:server:modules`
//   (dist-modules/).
//
//   node scripts/build-server.mjs [--outdir DIR] [--no-minify] [--keep-names] [--minify-identifiers] [--metafile FILE]
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    outdir: { type: 'string', default: 'dist/server/src' },
    'no-minify': { type: 'boolean', default: false },
    'keep-names': { type: 'boolean', default: false },
    'minify-identifiers': { type: 'boolean', default: false },
    metafile: { type: 'string' },
  },
});

/**
 * Not bundled:
 * - native addons: better-sqlite3 (bindings finds build/Release next to it; the checkpoint and
 *   backup workers require.resolve it too), argon2 (node-gyp-build, prebuilds/), sharp (its
 *   @img/sharp-* platform package);
 * - packages that find their files from __dirname: @ffmpeg-installer/*, @ffprobe-installer/*,
 *   ffmpeg-static (the binaries);
 * - age-encryption: the backup worker imports it by import.meta.resolve (bundled too would load it twice).
 */
const EXTERNAL = ['better-sqlite3', 'argon2', 'sharp', '@ffmpeg-installer/ffmpeg', '@ffprobe-installer/ffprobe', 'ffmpeg-static', 'age-encryption'];

/**
 * A package loaded with `await import()` becomes a chunk of its own. When that package is
 * CommonJS the chunk exports only `default` (esbuild cannot list a CommonJS module's names the
 * way Node does), so named imports from it would be undefined in the bundle though they work
 * under tsx. Such a package is either imported for its default or its side effects only
 * (listed here), or taken in its ES module build (ALIAS); the build refuses any other.
 */
const CJS_DEFAULT_ONLY = new Set(['reflect-metadata', 'qrcode']);
/** @peculiar/x509's package.json names its CommonJS build first ("main"); platform/security/tls.ts uses its named exports. */
const ALIAS = { '@peculiar/x509': '@peculiar/x509/build/x509.es.js' };

const outdir = path.resolve(ROOT, values.outdir);
rmSync(outdir, { recursive: true, force: true });

const result = await build({
  absWorkingDir: ROOT,
  entryPoints: ['server/src/main.ts', 'server/src/cli.ts'],
  outdir,
  outbase: 'server/src',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: EXTERNAL,
  alias: ALIAS,
  chunkNames: 'chunks/[name]-[hash]',
  sourcemap: 'linked',
  sourcesContent: false,
  keepNames: values['keep-names'],
  minifyWhitespace: !values['no-minify'],
  minifySyntax: !values['no-minify'],
  minifyIdentifiers: values['minify-identifiers'],
  treeShaking: true,
  legalComments: 'linked', // the bundled packages' licence comments, in a file beside each output
  // Bundled CommonJS packages call require() for node builtins (and their own JSON): ESM has no
  // require, so every chunk gets one.
  banner: { js: "import { createRequire as __placardCreateRequire } from 'node:module'; const require = __placardCreateRequire(import.meta.url);" },
  metafile: true,
  logLevel: 'warning',
});

const packageOf = (file) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file)?.[1];
const cjsChunks = Object.values(result.metafile.outputs)
  .filter((o) => o.entryPoint && result.metafile.inputs[o.entryPoint]?.format === 'cjs' && packageOf(o.entryPoint))
  .map((o) => packageOf(o.entryPoint))
  .filter((pkg) => !CJS_DEFAULT_ONLY.has(pkg));
if (cjsChunks.length) {
  console.error(
    `build-server: loaded with import() but CommonJS, so only its default export exists in the bundle: ${cjsChunks.join(', ')}.\n` +
      'Use its default export and list it in CJS_DEFAULT_ONLY, or alias it to its ES module build (ALIAS) in scripts/build-server.mjs.',
  );
  process.exit(1);
}

if (values.metafile) writeFileSync(path.resolve(ROOT, values.metafile), JSON.stringify(result.metafile));
