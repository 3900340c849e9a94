import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** `placard <args>` from the sources over `dataDir` (PLACARD_PORT 1: no server answers), with `stdin` and extra env. */
export function cliIn(
  dataDir: string,
  args: string[],
  stdin?: string,
  env: Record<string, string> = {},
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import=tsx', path.join(ROOT, 'server/src/cli.ts'), ...args], {
      cwd: ROOT,
      env: { ...process.env, PLACARD_DATA_DIR: dataDir, PLACARD_PORT: '1', ...env },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    child.on('close', (code) => resolve({ code, out, err }));
    child.stdin.end(stdin ?? '');
  });
}
