import { randomInt } from 'node:crypto';
import t from 'tap';
import { formatFinding, Fuzzer, isKnown, operationsOf, type Built, type KnownFailure } from './helpers/fuzz/runner.js';
import { Rng } from './helpers/fuzz/rng.js';
import { stringFromPattern } from './helpers/fuzz/regex-gen.js';
import { hostileBody, toJsonText, validValue } from './helpers/fuzz/schema-gen.js';

/**
 * The project's own fuzzing (issue 15), driven by the OpenAPI document the server serves:
 * every operation gets valid and hostile requests with every kind of credential, and every
 * answer is checked against the document (status, schema, error code, content type), with
 * no 5xx, no crash, no hang, and the server alive and ready after. Seeded: the seed is
 * printed, PLACARD_FUZZ_SEED repeats a run, PLACARD_FUZZ_REQUESTS sizes it; a failure
 * prints each request as a curl line. `npm run fuzz -- --seed N --requests M` runs longer.
 */

/**
 * Findings of bugs another branch fixes. Each entry names its bug; the integrator empties
 * this list when the fix is merged (a stale entry does no harm but hides nothing new: it
 * matches only its own kind, operation and text).
 */
const KNOWN_FAILURES: KnownFailure[] = [
  {
    // Issue 15, "A request can end the process" (branch robust): an uploaded tar that is
    // not a Placard backup emits an error on an archive stream nobody listens to.
    kind: 'crash',
    op: 'server',
    match: /backup\.ts|system\/backups/,
    bug: 'a hostile tar on POST /api/v1/system/backups kills the server (issue 15, branch robust)',
  },
];

const seed = Number(process.env.PLACARD_FUZZ_SEED ?? randomInt(2 ** 31));
const requests = Number(process.env.PLACARD_FUZZ_REQUESTS ?? 2500);

t.setTimeout(15 * 60_000);

t.test(`fuzz every operation of the served OpenAPI document (seed ${seed}, ${requests} requests; repeat with PLACARD_FUZZ_SEED=${seed})`, async (t) => {
  const fuzzer = new Fuzzer({ seed, requests, concurrency: 2, deadlineMs: 30_000, log: (line) => t.comment(line), progressEvery: 500 });
  t.teardown(() => fuzzer.close());
  await fuzzer.setup();
  const report = await fuzzer.run();
  const known = report.findings.filter((f) => isKnown(f, KNOWN_FAILURES));
  const unknown = report.findings.filter((f) => !isKnown(f, KNOWN_FAILURES));
  for (const f of known) t.comment(`known failure (${isKnown(f, KNOWN_FAILURES)!.bug}):\n${formatFinding(f)}`);
  t.comment(
    `seed ${seed}: ${report.requests} requests in ${Math.round(report.durationMs / 1000)} s; statuses ${JSON.stringify(report.byStatus)}; ` +
      `${report.operationsReached}/${report.operations} operations reached, ${report.operationsSucceeded} answered a 2xx; ` +
      `5xx ${report.serverErrors}, crashes ${report.crashes}, hangs ${report.hangs}, refused by the HTTP parser ${report.parserRejected}`,
  );
  t.same(unknown.map(formatFinding), [], `no findings (seed ${seed})`);
  t.ok(report.readyAfter, 'the server is alive and ready after the run');
  t.equal(report.requests, requests, 'every request was sent');
  t.equal(report.operationsReached, report.operations, 'every operation of the document was requested');
  // The state set up first (sessions, a screen, assets, playlists...) lets valid requests
  // reach handler logic: more than half the operations answer a success at least once.
  // (0.6 failed with seed 1814569123 at 190 of 322 on main as it was: with ~8 random
  // requests per operation the share moves by a few points from seed to seed.)
  t.ok(report.operationsSucceeded >= report.operations * 0.5, `${report.operationsSucceeded} of ${report.operations} operations answered a 2xx`);
});

t.test('the checks are real: each kind of wrong answer is a finding', async (t) => {
  const doc = {
    openapi: '3.1.0',
    components: {
      schemas: {
        Thing: { type: 'object', properties: { id: { type: 'string', format: 'uuid' } }, required: ['id'], additionalProperties: false },
        Error404: {
          type: 'object',
          properties: { error: { type: 'object', properties: { code: { enum: ['not_found'] }, message: { type: 'string' } }, required: ['code', 'message'] } },
          required: ['error'],
        },
      },
    },
    paths: {
      '/api/v1/things/{id}': {
        get: {
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }],
          'x-placard-auth': ['public'],
          responses: {
            200: {
              description: 'ok',
              content: { 'application/json': { schema: { type: 'object', properties: { data: { $ref: '#/components/schemas/Thing' } }, required: ['data'] } } },
            },
            404: {
              description: 'nf',
              'x-placard-error-codes': ['not_found'],
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Error404' } } },
            },
          },
        },
      },
      '/api/v1/things/{id}/image': {
        get: { parameters: [], 'x-placard-auth': ['public'], responses: { 200: { description: 'img', content: { 'image/*': {} } } } },
      },
    },
  };
  const fuzzer = new Fuzzer({ seed: 1, requests: 0 });
  t.teardown(() => fuzzer.close());
  fuzzer.useDocument(doc);
  const [thing, image] = operationsOf(doc);
  const built = (op = thing!): Built => ({
    req: { method: 'GET', path: '/api/v1/things/x', headers: { 'x-request-id': 'fuzz-test-1' } },
    mode: 'valid',
    op,
    checkAs: op,
  });
  const answer = (status: number, body: unknown, type = 'application/json') => ({
    status,
    headers: { 'content-type': type, 'x-request-id': 'fuzz-test-1' },
    body: Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body)),
    ms: 1,
  });
  const kindsAfter = (res: ReturnType<typeof answer>, op = thing!) => {
    const before = fuzzer.findings.length;
    fuzzer.checkAnswer(built(op), res);
    return fuzzer.findings.slice(before).map((f) => f.kind);
  };
  t.same(kindsAfter(answer(200, { data: { id: '0190f5a2-7b3c-7def-8abc-0123456789ab' } })), [], 'a documented answer passes');
  t.same(kindsAfter(answer(404, { error: { code: 'not_found', message: 'x' } })), [], 'a documented error passes');
  t.same(kindsAfter(answer(200, { data: { id: 'nope' } })), ['schema'], 'a body that breaks its schema');
  t.same(kindsAfter(answer(200, { data: { id: '0190f5a2-7b3c-7def-8abc-0123456789ab', extra: 1 } })), ['schema'], 'an undocumented field');
  t.same(kindsAfter(answer(409, { error: { code: 'conflict', message: 'x' } })), ['undocumented-status'], 'an undocumented status');
  t.same(kindsAfter(answer(404, { error: { code: 'conflict', message: 'x' } })), ['schema', 'error-code'], 'a code the status does not carry');
  t.same(kindsAfter(answer(500, { error: { code: 'internal', message: 'x' } })), ['5xx'], 'a 500');
  t.same(kindsAfter(answer(200, '<html></html>', 'text/html')), ['content-type'], 'a content type the document does not give');
  t.same(kindsAfter(answer(200, Buffer.from([0x89, 0x50]), 'image/png'), image), [], 'a content type within a documented range');
  t.same(
    kindsAfter({
      ...answer(200, { data: { id: '0190f5a2-7b3c-7def-8abc-0123456789ab' } }),
      headers: { 'content-type': 'application/json', 'x-request-id': 'other' },
    }),
    ['request-id'],
    'a request id not echoed',
  );
});

t.test('generators: valid values satisfy their schema, hostile ones do not have to, both are seeded', async (t) => {
  const rng = new Rng(42);
  for (const pattern of ['^#[0-9a-fA-F]{6}$', '^([01]\\d|2[0-3]):[0-5]\\d$', '^receiver-[0-9a-f]{64}$', '^(?:a|bc)+x?$']) {
    const made = stringFromPattern(pattern, rng);
    t.match(made, new RegExp(pattern), `a string for ${pattern}`);
  }
  const schema = {
    type: 'object',
    properties: {
      name: { type: 'string', minLength: 3, maxLength: 5 },
      n: { type: 'integer', minimum: 2, maximum: 4 },
      kind: { enum: ['a', 'b'] },
      tags: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 2 },
    },
    required: ['name', 'n', 'kind', 'tags'],
  };
  const ctx = { rng, doc: {}, idFor: () => undefined, stringFor: () => undefined };
  const bad = [];
  for (let i = 0; i < 200; i++) {
    const v = validValue(schema, ctx) as any;
    if (!(v.name.length >= 3 && v.name.length <= 5 && v.n >= 2 && v.n <= 4 && ['a', 'b'].includes(v.kind) && v.tags.length >= 1 && v.tags.length <= 2))
      bad.push(v);
  }
  t.same(bad, [], '200 generated values fit the schema');
  const a = new Rng(7);
  const b = new Rng(7);
  const body = { name: 'abc', n: 2 };
  t.equal(toJsonText(hostileBody(body, a)), toJsonText(hostileBody(body, b)), 'the same seed makes the same hostile body');
});
