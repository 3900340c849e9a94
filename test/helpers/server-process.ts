import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Test } from 'tap';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  /** The HTTPS listener's URL when PLACARD_HTTPS_PORT is given (not 0), else null. */
  httpsUrl: string | null;
  output(): string;
  /** Resolves with the exit code or signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * The real server (server/src/main.ts) as a child process over `dataDir`, on a free port;
 * resolves once it logs that it listens. HTTPS is off unless the test gives PLACARD_HTTPS_PORT.
 * Killed at teardown if still running. `script`
 * (relative to the repository) runs another entry point instead, e.g. one that calls main()
 * with extra routes (test/helpers/fault-server.ts).
 */
export async function startServerProcess(
  t: Test,
  dataDir: string,
  env: Record<string, string> = {},
  options: { script?: string } = {},
): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['--import=tsx', path.join(ROOT, options.script ?? 'server/src/main.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      PLACARD_DATA_DIR: dataDir,
      PLACARD_PORT: '0',
      PLACARD_HTTPS_PORT: '0',
      PLACARD_HOST: '127.0.0.1',
      PLACARD_LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}`)), 60_000);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /"url":"(http:\/\/[^"]+)"/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`server exited before listening:\n${out}`));
    });
  });
  const httpsUrl = /"httpsUrl":"(https:\/\/[^"]+)"/.exec(out)?.[1] ?? null;
  return { child, url, httpsUrl, output: () => out, exited };
}
