import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Version of the API description this server implements (spec section 9). */
export const API_VERSION = '0.10.0';

function readServerVersion(): string {
  // Works from the source tree (server/src) and from the build (dist/server/src).
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'placard' && pkg.version) return pkg.version;
    } catch {
      // keep looking upwards
    }
    dir = path.dirname(dir);
  }
  return '0.0.0';
}

/** Version of this Placard server build. */
export const SERVER_VERSION = readServerVersion();
