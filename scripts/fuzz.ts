/**
 * The fuzz test, longer: `npm run fuzz -- --seed N --requests M [--concurrency C] [--deadline-ms D] [--keep-data]`.
 * Starts the real server over a temporary data directory, reads its OpenAPI document and
 * sends M generated requests (valid and hostile, every credential kind); prints progress,
 * then every finding with a reproducible request, and the counts. Exit code 1 on findings.
 */
import '../test/helpers/no-outbound.mjs';
import { formatFinding, Fuzzer } from '../test/helpers/fuzz/runner.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const seed = Number(arg('seed') ?? Math.floor(Math.random() * 2 ** 31));
const requests = Number(arg('requests') ?? 20_000);
const concurrency = Number(arg('concurrency') ?? 2);
const deadlineMs = Number(arg('deadline-ms') ?? 20_000);
console.log(`fuzz: seed ${seed}, ${requests} requests, concurrency ${concurrency} (repeat with --seed ${seed})`);
const fuzzer = new Fuzzer({
  seed,
  requests,
  concurrency,
  deadlineMs,
  log: (l) => console.log(l),
  progressEvery: 1000,
  keepData: process.argv.includes('--keep-data'),
});
let failed = true;
try {
  await fuzzer.setup();
  const report = await fuzzer.run();
  for (const f of report.findings) console.log(`${formatFinding(f)}\n`);
  const kinds = new Map<string, number>();
  for (const f of report.findings) kinds.set(f.kind, (kinds.get(f.kind) ?? 0) + 1);
  console.log(`fuzz: statuses ${JSON.stringify(report.byStatus)}`);
  console.log(`fuzz: modes ${JSON.stringify(report.byMode)}`);
  console.log(`fuzz: operations ${report.operations}, reached ${report.operationsReached}, answered 2xx ${report.operationsSucceeded}`);
  console.log(`fuzz: never a 2xx: ${fuzzer.unreached().join('; ')}`);
  console.log(
    `fuzz: seed ${report.seed}: ${report.requests} requests in ${Math.round(report.durationMs / 1000)} s; 5xx ${report.serverErrors}, crashes ${report.crashes}, hangs ${report.hangs}, undocumented statuses ${report.undocumented}, ready after: ${report.readyAfter}; refused by the HTTP parser ${report.parserRejected}; findings ${report.findings.length} ${JSON.stringify(Object.fromEntries(kinds))}`,
  );
  failed = report.findings.length > 0;
} finally {
  await fuzzer.close();
}
process.exit(failed ? 1 : 0);
