// The packaged server, used as a venue's admin would: set up the owner, upload an image with
// tus, complete it, and wait until the asset is `ready` (the server decoded it and rendered
// its variants with the packaged sharp). Runs on any Node >= 20 (the client is not under test).
// Usage: node smoke-client.mjs http://127.0.0.1:PORT [timeoutSeconds]
import { crc32, deflateSync } from 'node:zlib';

const [base, timeoutArg] = process.argv.slice(2);
if (!base) {
  console.error('usage: smoke-client.mjs BASE_URL [TIMEOUT_SECONDS]');
  process.exit(2);
}
const until = Date.now() + Number(timeoutArg ?? 300) * 1000;

/** A real 96x64 RGB PNG (a gradient), made here. */
function png(width, height) {
  const chunk = (type, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body) >>> 0);
    return Buffer.concat([len, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const rows = [];
  for (let y = 0; y < height; y++) {
    const row = Buffer.alloc(1 + width * 3);
    for (let x = 0; x < width; x++) row.set([Math.round((x / width) * 255), Math.round((y / height) * 255), 128], 1 + x * 3);
    rows.push(row);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

async function call(path, init = {}, expect) {
  const res = await fetch(base + path, { ...init, signal: AbortSignal.timeout(120_000) });
  const text = await res.text();
  if (expect && res.status !== expect) throw new Error(`${init.method ?? 'GET'} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
  return { res, body: text ? JSON.parse(text) : null };
}

const setup = await call(
  '/api/v1/auth/setup',
  {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'owner@example.test', password: 'smoke test owner password', displayName: 'Smoke' }),
  },
  201,
);
const cookie = setup.res.headers
  .getSetCookie()
  .map((c) => c.split(';')[0])
  .join('; ');
const auth = { cookie, 'x-csrf-token': setup.body.data.csrfToken };
const bytes = png(96, 64);
const created = await call(
  '/api/v1/uploads',
  {
    method: 'POST',
    headers: {
      ...auth,
      'tus-resumable': '1.0.0',
      'upload-length': String(bytes.length),
      'upload-metadata': `filename ${Buffer.from('smoke.png').toString('base64')}`,
    },
  },
  201,
);
const location = created.res.headers.get('location');
await call(
  location,
  { method: 'PATCH', headers: { ...auth, 'tus-resumable': '1.0.0', 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' }, body: bytes },
  204,
);
const completed = await call(`${location}/complete`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{}' }, 201);
const id = completed.body.data.id;
let asset = completed.body.data;
while (asset.state === 'processing' || asset.state === 'uploading') {
  if (Date.now() > until) throw new Error(`asset ${id} still ${asset.state}`);
  await new Promise((r) => setTimeout(r, 500));
  asset = (await call(`/api/v1/assets/${id}`, { headers: auth }, 200)).body.data;
}
if (asset.state !== 'ready') throw new Error(`asset ${id} ended ${asset.state}: ${JSON.stringify(asset).slice(0, 500)}`);
console.log(`smoke-client: uploaded a ${bytes.length}-byte PNG with tus; asset ${id} is ready (${asset.width ?? '?'}x${asset.height ?? '?'})`);
