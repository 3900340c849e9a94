import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { defineRoute } from '../server/src/platform/http/route.js';
import { encodeMetadata, parseMetadata, readPatch, realPartIo, receivePatch, TUS_OCTETS, type TusPatchTarget } from '../server/src/platform/http/tus.js';
import { KeyedLocks } from '../server/src/platform/media/locks.js';
import { startApp, tempDataDir } from './helpers/harness.js';

// platform/http/tus.ts speaks tus without knowing what an upload becomes: here its owner is
// a part file and a few fields, not the media library (media-upload.test.ts covers that one).

interface Upload {
  offset: number;
  length: number;
  expiresAt: string;
  recorded: number[];
  gone: boolean;
}

t.test('receivePatch appends at the offset, records it, and refuses what the protocol refuses', async (t) => {
  const dir = tempDataDir(t);
  const file = path.join(dir, 'one.part');
  const locks = new KeyedLocks();
  let upload: Upload;
  const reset = (length: number) => {
    fs.writeFileSync(file, '');
    upload = { offset: 0, length, expiresAt: '2030-01-02T03:04:05.000Z', recorded: [], gone: false };
  };
  reset(10);
  const target: TusPatchTarget = {
    file,
    io: realPartIo(),
    exclusive: async (receive, stop) => {
      const release = await locks.acquire('one', stop);
      try {
        return await receive();
      } finally {
        release();
      }
    },
    load: async () => ({ offset: upload.offset, length: upload.length }),
    partGone: async () => void (upload.gone = true),
    renewedExpiry: async () => upload.expiresAt,
    record: async (offset) => {
      upload.offset = offset;
      upload.recorded.push(offset);
    },
  };
  const route = defineRoute({
    method: 'PATCH',
    path: '/api/v1/t/tus',
    auth: 'public',
    tags: ['Test'],
    summary: 'a tus PATCH over one part file',
    rawBody: { contentTypes: [TUS_OCTETS] },
    responses: {
      460: { description: 'checksum_mismatch' },
      413: { description: 'payload_too_large' },
      412: { description: 'unsupported_protocol_version' },
      409: { description: 'conflict' },
      404: { description: 'not_found' },
      400: { description: 'validation_failed' },
      204: { description: 'Stored' },
    },
    handler: async (ctx) => receivePatch(ctx, readPatch(ctx), target),
  });
  const app = await startApp(t, { extraRoutes: [route] });
  const patch = (offset: string, body: string, headers: Record<string, string> = {}) =>
    app.fetch('/api/v1/t/tus', {
      method: 'PATCH',
      headers: { 'tus-resumable': '1.0.0', 'content-type': TUS_OCTETS, 'upload-offset': offset, ...headers },
      body,
    });
  const errorOf = async (res: Response) => ((await res.json()) as { error: { code: string } }).error.code;

  let res = await patch('0', 'hello');
  t.equal(res.status, 204);
  t.equal(res.headers.get('upload-offset'), '5');
  t.equal(res.headers.get('upload-expires'), 'Wed, 02 Jan 2030 03:04:05 GMT', 'the renewed expiry, as an HTTP date');
  t.equal(res.headers.get('tus-resumable'), '1.0.0');
  res = await patch('5', 'world');
  t.equal(res.status, 204);
  t.equal(fs.readFileSync(file, 'utf8'), 'helloworld', 'the chunks are appended in order');
  t.same(upload!.recorded, [5, 10], 'each offset was recorded');

  reset(10);
  await patch('0', 'abc');
  res = await patch('0', 'abc');
  t.equal(res.status, 409, 'an offset that is not the one received');
  t.equal(await errorOf(res), 'conflict');
  t.equal(res.headers.get('upload-offset'), '3', 'the answer says the offset received');
  res = await patch('3', 'more than fits');
  t.equal(res.status, 413, 'a declared length past the announced length');
  t.equal(upload!.offset, 3);

  const digest = (s: string) => createHash('sha256').update(s).digest('base64');
  res = await patch('3', 'defg', { 'upload-checksum': `sha256 ${digest('not it')}` });
  t.equal(res.status, 460);
  t.equal(await errorOf(res), 'checksum_mismatch');
  t.equal(fs.readFileSync(file, 'utf8'), 'abc', 'a chunk that does not match is discarded');
  t.same(upload!.recorded, [3], 'and nothing was recorded for it');
  res = await patch('3', 'defg', { 'upload-checksum': `sha256 ${digest('defg')}` });
  t.equal(res.status, 204, 'a matching checksum is accepted');
  t.equal(fs.readFileSync(file, 'utf8'), 'abcdefg');

  res = await patch('7', 'x', { 'upload-checksum': 'crc32 AAAA' });
  t.equal(res.status, 400, 'an algorithm not offered');
  res = await patch('seven', 'x');
  t.equal(res.status, 400, 'an Upload-Offset that is not a number');
  res = await patch('7', 'x', { 'tus-resumable': '0.2.2' });
  t.equal(res.status, 412, 'another protocol version');
  t.equal(res.headers.get('tus-version'), '1.0.0');
  res = await patch('7', 'x', { 'content-type': 'application/octet-stream' });
  t.equal(res.status, 415, 'bytes not sent as offset+octet-stream');
  t.equal(upload!.offset, 7, 'none of the refused requests moved the offset');

  fs.rmSync(file);
  res = await patch('7', 'x');
  t.equal(res.status, 404, 'a part file that is gone ends the upload');
  t.ok(upload!.gone, 'its owner was told');
});

t.test('Upload-Metadata: parsed from base64 pairs, written back the same, malformed refused', async (t) => {
  const header = `filename ${Buffer.from('menu été.jpg').toString('base64')},empty,folderId ${Buffer.from('x').toString('base64')}`;
  const meta = parseMetadata(header);
  t.same(meta, { filename: 'menu été.jpg', empty: '', folderId: 'x' });
  t.equal(encodeMetadata(meta), header, 'encodeMetadata is its inverse');
  t.same(parseMetadata('  '), {}, 'an empty header is no metadata');
  t.throws(() => parseMetadata('a b c'), { code: 'validation_failed' }, 'three words in a pair');
  t.throws(() => parseMetadata('a eA==,a eA=='), { code: 'validation_failed' }, 'a key twice');
  t.throws(() => parseMetadata('a not*base64'), { code: 'validation_failed' }, 'a value that is not base64');
});
