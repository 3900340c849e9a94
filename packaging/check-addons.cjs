// Loads every native part of a staged release with the runtime running this script (the
// bundled Node; under qemu for arm64) and makes each do real work. package.sh runs it before
// packing: a package whose addon was built against other headers, or for another ABI or
// architecture, fails here instead of on a venue's box.
// Usage: <bundled node> check-addons.cjs <staged package dir> <expected arch: x64|arm64>
'use strict';
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { createRequire } = require('node:module');

const [stage, arch] = process.argv.slice(2);
if (!stage || !arch) {
  console.error('usage: check-addons.cjs STAGE_DIR ARCH');
  process.exit(2);
}
const req = createRequire(path.join(path.resolve(stage), 'package.json'));
const failures = [];
async function check(name, fn) {
  try {
    const detail = await fn();
    console.log(`check-addons: ${name}: ok (${detail})`);
  } catch (err) {
    failures.push(name);
    console.error(`check-addons: ${name}: FAILED: ${err?.message ? err.message : err}`);
  }
}

(async () => {
  await check('runtime', () => {
    if (process.arch !== arch) throw new Error(`this node is ${process.arch}, the package is for ${arch}`);
    return `node ${process.version} ${process.arch}, ABI ${process.versions.modules}`;
  });
  await check('better-sqlite3', () => {
    const Database = req('better-sqlite3');
    const db = new Database(':memory:');
    db.exec('create table t (x integer); insert into t values (1), (2), (3)');
    const row = db.prepare('select sum(x) as s, sqlite_version() as v from t').get();
    db.close();
    if (row.s !== 6) throw new Error(`wrong answer ${row.s}`);
    return `SQLite ${row.v}`;
  });
  await check('argon2', async () => {
    const argon2 = req('argon2');
    const hash = await argon2.hash('check', { memoryCost: 1024, timeCost: 1 });
    if (!(await argon2.verify(hash, 'check'))) throw new Error('verify failed');
    return 'hash and verify';
  });
  await check('sharp', async () => {
    const sharp = req('sharp');
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: { r: 255, g: 0, b: 0 } } })
      .png()
      .toBuffer();
    const meta = await sharp(png).metadata();
    if (meta.width !== 8 || meta.format !== 'png') throw new Error(`unexpected metadata ${JSON.stringify(meta)}`);
    return `libvips ${sharp.versions.vips}`;
  });
  for (const tool of ['ffmpeg', 'ffprobe']) {
    await check(`@${tool}-installer`, () => {
      const bin = req(`@${tool}-installer/${tool}`).path;
      if (!bin.includes(`linux-${arch}`)) throw new Error(`resolves to ${bin}, not the linux-${arch} binary`);
      // PLACARD_EXEC_PREFIX: how to run a binary of the package's architecture here (qemu).
      const prefix = (process.env.PLACARD_EXEC_PREFIX || '').split(' ').filter(Boolean);
      const argv = [...prefix, bin, '-version'];
      const out = execFileSync(argv[0], argv.slice(1), { encoding: 'utf8' });
      return out.split('\n')[0];
    });
  }
  if (failures.length) {
    console.error(`check-addons: ${failures.length} failed: ${failures.join(', ')}`);
    process.exit(1);
  }
})();
