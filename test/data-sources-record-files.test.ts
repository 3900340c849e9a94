import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import sharp from 'sharp';
import t, { type Test } from 'tap';
import { MAX_ATTACHMENT_BYTES, MAX_ATTACHMENTS_PER_RECORD } from '../server/src/modules/data-sources/records-attachments.schemas.js';
import { signIn, type SignedIn } from './helpers/auth.js';
import { startApp, type TestApp } from './helpers/harness.js';

/**
 * Comments and attachments of records (issue 18, docs/data-sources.md "Comments and
 * attachments"): through the real routes, over a real data directory.
 */

const UNKNOWN = '0190f5a2-7b3c-7def-8abc-0123456789ab';
const sha256 = (b: Buffer | Uint8Array) => createHash('sha256').update(b).digest('hex');

/** A minimal valid PDF, written by hand (one empty page). */
function minimalPdf(): Buffer {
  const objects = ['<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [3 0 R] /Count 1 >>', '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 72 72] >>'];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const off of offsets) out += `${String(off).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

const png = (colour = '#ff0000') =>
  sharp({ create: { width: 8, height: 8, channels: 3, background: colour } })
    .png()
    .toBuffer();

/** A table with `n` published-form records (made through the records routes), and their ids. */
async function tableWithRecords(app: TestApp, who: SignedIn, name: string, n: number): Promise<{ sourceId: string; recordIds: string[] }> {
  const form = await app.json('/api/v1/forms', {
    method: 'POST',
    headers: who.headers,
    json: { name, fields: [{ key: 'dish', label: 'Dish', type: 'text', required: true }] },
  });
  if (form.status !== 201) throw new Error(`form: ${form.status} ${JSON.stringify(form.body)}`);
  const sourceId = form.body.data.sourceId as string;
  const recordIds: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await app.json(`/api/v1/data-sources/${sourceId}/records`, {
      method: 'POST',
      headers: who.headers,
      json: { values: { dish: `Dish ${i + 1}` } },
    });
    if (res.status !== 201) throw new Error(`record: ${res.status} ${JSON.stringify(res.body)}`);
    recordIds.push(res.body.data.id);
  }
  return { sourceId, recordIds };
}

const recordUrl = (sourceId: string, recordId: string, tail = '') => `/api/v1/data-sources/${sourceId}/records/${recordId}${tail}`;

function multipart(bytes: Buffer | Uint8Array, fileName: string, type: string, field = 'file'): FormData {
  const form = new FormData();
  form.append(field, new Blob([new Uint8Array(bytes)], { type }), fileName);
  return form;
}

async function attach(app: TestApp, who: SignedIn, url: string, body: FormData | Buffer, headers: Record<string, string> = {}) {
  const res = await app.fetch(url, {
    method: 'POST',
    headers: { ...who.headers, ...headers },
    body: body instanceof FormData ? body : new Uint8Array(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

/** Every file under a directory (relative paths), [] when it does not exist. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
}

const attachmentsDir = (app: TestApp) => path.join(app.dataDir, 'media', 'attachments');
const tmpDir = (app: TestApp) => path.join(app.dataDir, 'media', 'tmp');

async function eventsOf(app: TestApp, recordId: string) {
  const rows = await app.deps.db.selectFrom('data_source_record_events').selectAll().where('record_id', '=', recordId).orderBy('seq').execute();
  return rows.map((r) => ({ kind: r.kind, seq: r.seq, userId: r.user_id, data: JSON.parse(r.data) }));
}

async function setup(t: Test) {
  const app = await startApp(t);
  const owner = await signIn(app);
  const editor = await signIn(app, { role: 'editor' });
  const viewer = await signIn(app, { role: 'viewer' });
  const table = await tableWithRecords(app, owner, 'Specials', 2);
  return { app, owner, editor, viewer, ...table };
}

t.test('comments: anyone who may read comments; mentions must be active users; the record does not change', async (t) => {
  const { app, owner, editor, viewer, sourceId, recordIds } = await setup(t);
  const [recordId] = recordIds as [string];
  const url = recordUrl(sourceId, recordId, '/comments');
  const revisionBefore = await app.deps.db
    .selectFrom('data_source_rows')
    .select(['revision', 'updated_at'])
    .where('id', '=', recordId)
    .executeTakeFirstOrThrow();

  const made = await app.json(url, {
    method: 'POST',
    headers: editor.headers,
    json: { body: '  Price looks wrong  ', mentions: [owner.user.id, viewer.user.id, owner.user.id] },
  });
  t.equal(made.status, 201, JSON.stringify(made.body));
  t.match(made.body.data, { id: String, recordId, body: 'Price looks wrong', by: editor.user.id, at: String });
  t.same(made.body.data.mentions, [owner.user.id, viewer.user.id], 'mentions are kept once each, in order');

  const byViewer = await app.json(url, { method: 'POST', headers: viewer.headers, json: { body: 'Agreed' } });
  t.equal(byViewer.status, 201, 'a viewer may comment');
  t.same(byViewer.body.data.mentions, []);

  t.same(
    (await eventsOf(app, recordId)).map((e) => [e.kind, e.seq, e.userId, e.kind === 'created' ? null : e.data]),
    [
      ['created', 1, owner.user.id, null],
      ['comment', 2, editor.user.id, { body: 'Price looks wrong', mentions: [owner.user.id, viewer.user.id] }],
      ['comment', 3, viewer.user.id, { body: 'Agreed', mentions: [] }],
    ],
    'stored as numbered comment entries of the audit trail',
  );
  t.same(
    await app.deps.db.selectFrom('data_source_rows').select(['revision', 'updated_at']).where('id', '=', recordId).executeTakeFirstOrThrow(),
    revisionBefore,
    'the record’s revision and update time do not move',
  );

  // Mentions: an unknown user, and a disabled one, have no access.
  const gone = await signIn(app, { role: 'editor' });
  await app.deps.db.updateTable('users').set({ disabled_at: new Date().toISOString() }).where('id', '=', gone.user.id).execute();
  const refused = await app.json(url, { method: 'POST', headers: owner.headers, json: { body: 'Hey', mentions: [UNKNOWN, viewer.user.id, gone.user.id] } });
  t.equal(refused.status, 400);
  t.equal(refused.body.error.code, 'validation_failed');
  t.same(
    refused.body.error.details.issues.map((i: any) => [i.path, i.code]),
    [
      [['mentions', 0], 'invalid_reference'],
      [['mentions', 2], 'invalid_reference'],
    ],
    'each mention without access is named',
  );
  t.equal((await eventsOf(app, recordId)).length, 3, 'nothing was stored for the refused comment');

  for (const [body, label] of [
    [{ body: '' }, 'empty'],
    [{ body: '   ' }, 'blank'],
    [{ body: 'x'.repeat(5001) }, 'too long'],
    [{ body: 'x', mentions: ['nope'] }, 'a mention that is no id'],
  ] as const) {
    const res = await app.json(url, { method: 'POST', headers: owner.headers, json: body });
    t.equal(res.status, 400, label);
  }
  t.equal((await app.json(url, { method: 'POST', headers: owner.headers, json: { body: 'x'.repeat(5000) } })).status, 201, '5000 characters fit');

  const other = await tableWithRecords(app, owner, 'Rooms', 1);
  t.equal(
    (await app.json(recordUrl(sourceId, UNKNOWN, '/comments'), { method: 'POST', headers: owner.headers, json: { body: 'x' } })).status,
    404,
    'unknown record',
  );
  t.equal(
    (await app.json(recordUrl(other.sourceId, recordId, '/comments'), { method: 'POST', headers: owner.headers, json: { body: 'x' } })).status,
    404,
    'a record of another table',
  );
  t.equal(
    (await app.json(recordUrl(UNKNOWN, recordId, '/comments'), { method: 'POST', headers: owner.headers, json: { body: 'x' } })).status,
    404,
    'unknown table',
  );
  t.equal((await app.json(url, { method: 'POST', json: { body: 'x' } })).status, 401, 'no session: 401');
});

t.test('attachments: a PNG and a PDF are kept and served with safe headers; 304; delete removes the file', async (t) => {
  const { app, owner, editor, viewer, sourceId, recordIds } = await setup(t);
  const [recordId] = recordIds as [string];
  const url = recordUrl(sourceId, recordId, '/attachments');

  const image = await png();
  const a = await attach(app, editor, url, multipart(image, 'special.png', 'application/octet-stream'));
  t.equal(a.status, 201, JSON.stringify(a.body));
  t.match(a.body.data, {
    id: String,
    recordId,
    fileName: 'special.png',
    contentType: 'image/png',
    sizeBytes: image.length,
    sha256: sha256(image),
    createdBy: editor.user.id,
    createdAt: String,
  });
  t.equal(a.body.data.url, `${url}/${a.body.data.id}/content`);
  t.same(filesUnder(attachmentsDir(app)), [path.join(sourceId, recordId, a.body.data.id)], 'stored under media/attachments/<source>/<record>/<id>');

  // A raw body: the declared type is not trusted (octet-stream), the name comes from Content-Disposition.
  const pdf = minimalPdf();
  const b = await attach(app, editor, url, pdf, {
    'content-type': 'application/octet-stream',
    'content-disposition': `attachment; filename="menu.pdf"; filename*=UTF-8''Men%C3%BC%20f%C3%BCr%20heute.pdf`,
  });
  t.equal(b.status, 201, JSON.stringify(b.body));
  t.equal(b.body.data.contentType, 'application/pdf');
  t.equal(b.body.data.fileName, 'Menü für heute.pdf');
  const c = await attach(app, editor, `${url}?name=${encodeURIComponent('../../etc/passwd\r\nX-Evil: 1.png')}`, image, { 'content-type': 'image/png' });
  t.equal(c.status, 201);
  t.equal(c.body.data.fileName, 'etcpasswdX-Evil: 1.png', 'separators and control characters are dropped from the name');

  t.same(
    (await eventsOf(app, recordId)).filter((e) => e.kind !== 'created').map((e) => [e.kind, e.data.attachmentId, e.data.sha256]),
    [
      ['attachment_added', a.body.data.id, sha256(image)],
      ['attachment_added', b.body.data.id, sha256(pdf)],
      ['attachment_added', c.body.data.id, sha256(image)],
    ],
  );

  // The record's detail lists them, oldest first, for anyone who may read it; another record lists none.
  const detail = await app.json(recordUrl(sourceId, recordId), { headers: viewer.headers });
  t.same(detail.body.data.attachments, [a.body.data, b.body.data, c.body.data], 'GET one record carries its attachments');
  t.same((await app.json(recordUrl(sourceId, recordIds[1]!), { headers: viewer.headers })).body.data.attachments, [], 'another record has none');

  // Content: a viewer reads it, with the sniffed type and safe headers.
  const got = await app.fetch(a.body.data.url, { headers: viewer.headers });
  t.equal(got.status, 200);
  const bytes = Buffer.from(await got.arrayBuffer());
  t.equal(sha256(bytes), a.body.data.sha256, 'the bytes served are the bytes sent');
  t.equal(got.headers.get('content-type'), 'image/png');
  t.equal(got.headers.get('x-content-type-options'), 'nosniff');
  t.match(got.headers.get('content-security-policy'), /^default-src 'none'.*sandbox/);
  t.equal(got.headers.get('content-disposition'), 'inline; filename="special.png"', 'images inline');
  t.equal(got.headers.get('etag'), `"${sha256(image)}"`);
  const again = await app.fetch(a.body.data.url, { headers: { ...viewer.headers, 'if-none-match': `"${sha256(image)}"` } });
  t.equal(again.status, 304);
  t.equal((await again.arrayBuffer()).byteLength, 0);

  const doc = await app.fetch(b.body.data.url, { headers: viewer.headers });
  t.equal(doc.status, 200);
  t.equal(doc.headers.get('content-type'), 'application/pdf');
  t.equal(sha256(Buffer.from(await doc.arrayBuffer())), sha256(pdf));
  t.equal(
    doc.headers.get('content-disposition'),
    `attachment; filename="Men_ f_r heute.pdf"; filename*=UTF-8''Men%C3%BC%20f%C3%BCr%20heute.pdf`,
    'PDFs download; a non-ASCII name gets an ASCII fallback and filename* (RFC 5987)',
  );
  const evil = await app.fetch(c.body.data.url, { headers: viewer.headers });
  t.notMatch(evil.headers.get('content-disposition'), /[\r\n]/);
  t.equal(evil.headers.get('x-evil'), null, 'a name cannot add a header');
  await evil.arrayBuffer();

  // Another table's id, or another record's, in the path: 404.
  const other = await tableWithRecords(app, owner, 'Rooms', 1);
  const [otherRecord] = other.recordIds as [string];
  for (const [p, label] of [
    [`${recordUrl(other.sourceId, recordId)}/attachments/${a.body.data.id}/content`, 'another table'],
    [`${recordUrl(other.sourceId, otherRecord)}/attachments/${a.body.data.id}/content`, 'another table’s record'],
    [`${recordUrl(sourceId, recordIds[1]!)}/attachments/${a.body.data.id}/content`, 'another record of the table'],
    [`${url}/${UNKNOWN}/content`, 'an unknown attachment'],
  ] as const) {
    t.equal((await app.fetch(p, { headers: owner.headers })).status, 404, `content: ${label}`);
    t.equal((await app.fetch(p.replace(/\/content$/, ''), { method: 'DELETE', headers: owner.headers })).status, 404, `delete: ${label}`);
  }
  t.equal(
    (await attach(app, editor, `${recordUrl(other.sourceId, recordId)}/attachments`, image, { 'content-type': 'image/png' })).status,
    404,
    'upload: another table',
  );
  t.equal((await app.fetch(a.body.data.url)).status, 401, 'no session: 401');

  // Delete: a viewer may not; an editor removes the row and the file.
  t.equal((await app.fetch(`${url}/${a.body.data.id}`, { method: 'DELETE', headers: viewer.headers })).status, 403, 'a viewer may not delete');
  const deleted = await app.fetch(`${url}/${a.body.data.id}`, { method: 'DELETE', headers: editor.headers });
  t.equal(deleted.status, 204);
  t.notOk(existsSync(path.join(attachmentsDir(app), sourceId, recordId, a.body.data.id)), 'the file is gone');
  t.equal((await app.fetch(a.body.data.url, { headers: owner.headers })).status, 404, 'and so is its content');
  t.equal((await app.fetch(`${url}/${a.body.data.id}`, { method: 'DELETE', headers: editor.headers })).status, 404, 'a second delete is 404');
  const last = (await eventsOf(app, recordId)).at(-1)!;
  t.same([last.kind, last.userId, last.data], ['attachment_removed', editor.user.id, { attachmentId: a.body.data.id, fileName: 'special.png' }]);
  t.equal(filesUnder(attachmentsDir(app)).length, 2, 'the other two stay');
  t.same(
    (await app.json(recordUrl(sourceId, recordId), { headers: viewer.headers })).body.data.attachments.map((x: { id: string }) => x.id),
    [b.body.data.id, c.body.data.id],
    'the detail no longer lists the removed one',
  );
});

t.test('attachments: the bytes decide the type; size and count limits; nothing refused stays on disk', async (t) => {
  const { app, owner, editor, viewer, sourceId, recordIds } = await setup(t);
  const [recordId] = recordIds as [string];
  const url = recordUrl(sourceId, recordId, '/attachments');
  const nothingStored = async (label: string) => {
    t.same(filesUnder(attachmentsDir(app)), [], `${label}: no attachment file`);
    t.same(filesUnder(tmpDir(app)), [], `${label}: no temp file`);
    t.equal((await app.deps.db.selectFrom('data_source_record_attachments').select('id').execute()).length, 0, `${label}: no row`);
  };

  const text = Buffer.from('just some text, not an image\n');
  const renamed = await attach(app, editor, url, multipart(text, 'photo.png', 'image/png'));
  t.equal(renamed.status, 415, 'a text file named .png and declared image/png');
  t.equal(renamed.body.error.code, 'unsupported_media_type');
  const raw = await attach(app, editor, url, text, { 'content-type': 'image/png', 'content-disposition': 'attachment; filename="photo.png"' });
  t.equal(raw.status, 415, 'the same as a raw body');
  const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><rect width="1" height="1"/></svg>');
  t.equal((await attach(app, editor, url, multipart(svg, 'logo.svg', 'image/svg+xml'))).status, 415, 'SVG is refused (it can carry script)');
  const tiff = await sharp({ create: { width: 2, height: 2, channels: 3, background: '#000' } })
    .tiff()
    .toBuffer();
  t.equal((await attach(app, editor, url, multipart(tiff, 'scan.tiff', 'image/tiff'))).status, 415, 'an image type outside the list');
  t.equal((await attach(app, editor, url, Buffer.from('x'), { 'content-type': 'text/plain' })).status, 415, 'a body type not listed');
  await nothingStored('refused types');

  t.equal((await attach(app, editor, url, Buffer.alloc(0), { 'content-type': 'image/png' })).status, 400, 'an empty body');
  t.equal((await attach(app, editor, url, multipart(Buffer.alloc(0), 'e.png', 'image/png'))).status, 400, 'an empty file');
  t.equal((await attach(app, editor, url, multipart(await png(), 'a.png', 'image/png', 'picture'))).status, 400, 'the file in another field');
  t.equal(
    (await attach(app, editor, url, Buffer.from('--x\r\nnot really'), { 'content-type': 'multipart/form-data; boundary=x' })).status,
    400,
    'a malformed multipart body',
  );
  await nothingStored('empty and malformed');

  // Over the limit: refused when Content-Length says so, and while streaming when it does not.
  const big = Buffer.concat([await png(), Buffer.alloc(MAX_ATTACHMENT_BYTES + 1 - (await png()).length, 7)]);
  t.equal(big.length, MAX_ATTACHMENT_BYTES + 1);
  const declared = await rawPost(app, editor, url, [big], { 'content-type': 'image/png', 'content-length': String(big.length) });
  t.equal(declared.status, 413, 'Content-Length over the limit');
  const chunks = Array.from({ length: 26 }, () => Buffer.alloc(1024 * 1024, 1));
  chunks[0] = Buffer.concat([await png(), chunks[0]!]);
  const streamed = await rawPost(app, editor, url, chunks, { 'content-type': 'image/png', 'transfer-encoding': 'chunked' });
  t.equal(streamed.status, 413, 'a chunked body that grows over the limit');
  t.equal(streamed.code, 'payload_too_large');
  const inForm = await attach(app, editor, url, multipart(big, 'big.png', 'image/png'));
  t.equal(inForm.status, 413, 'a multipart file over the limit');
  await nothingStored('over the limit');

  // Access: viewers (by role, or narrowed by a grant) may not attach; a grant may widen a viewer.
  const image = await png();
  t.equal((await attach(app, viewer, url, image, { 'content-type': 'image/png' })).status, 403, 'a viewer may not attach');
  const narrowed = await signIn(app, { role: 'editor' });
  await app.json(`/api/v1/data-sources/${sourceId}/access/${narrowed.user.id}`, { method: 'PUT', headers: owner.headers, json: { level: 'viewer' } });
  t.equal((await attach(app, narrowed, url, image, { 'content-type': 'image/png' })).status, 403, 'an editor narrowed to viewer on this table may not');
  await nothingStored('refused callers');
  await app.json(`/api/v1/data-sources/${sourceId}/access/${viewer.user.id}`, { method: 'PUT', headers: owner.headers, json: { level: 'editor' } });
  t.equal((await attach(app, viewer, url, image, { 'content-type': 'image/png' })).status, 201, 'a viewer granted editor may');

  // At most MAX_ATTACHMENTS_PER_RECORD per record.
  for (let i = 1; i < MAX_ATTACHMENTS_PER_RECORD; i++) {
    const res = await attach(app, editor, url, await png(`#0000${String(i).padStart(2, '0')}`), { 'content-type': 'image/png' });
    t.equal(res.status, 201, `attachment ${i + 1}`);
  }
  const tooMany = await attach(app, editor, url, image, { 'content-type': 'image/png' });
  t.equal(tooMany.status, 409);
  t.equal(tooMany.body.error.code, 'conflict');
  t.equal(filesUnder(attachmentsDir(app)).length, MAX_ATTACHMENTS_PER_RECORD);
  t.equal(
    (await attach(app, editor, recordUrl(sourceId, recordIds[1]!, '/attachments'), image, { 'content-type': 'image/png' })).status,
    201,
    'another record has its own count',
  );
});

t.test('deleting a record, the table, or replacing its rows, removes the attachment files', async (t) => {
  const { app, owner, sourceId, recordIds } = await setup(t);
  const image = await png();
  for (const id of recordIds) t.equal((await attach(app, owner, recordUrl(sourceId, id, '/attachments'), image, { 'content-type': 'image/png' })).status, 201);
  // A record deleted: its folder goes, the others' stay.
  const extra = await app.json(`/api/v1/data-sources/${sourceId}/records`, { method: 'POST', headers: owner.headers, json: { values: { dish: 'Extra' } } });
  const extraId: string = extra.body.data.id;
  t.equal((await attach(app, owner, recordUrl(sourceId, extraId, '/attachments'), image, { 'content-type': 'image/png' })).status, 201);
  t.equal((await app.fetch(recordUrl(sourceId, extraId), { method: 'DELETE', headers: owner.headers })).status, 204);
  t.notOk(existsSync(path.join(attachmentsDir(app), sourceId, extraId)), 'the deleted record’s folder is gone');
  t.equal(filesUnder(path.join(attachmentsDir(app), sourceId)).length, recordIds.length, 'the other records’ files stay');
  const other = await tableWithRecords(app, owner, 'Rooms', 1);
  t.equal((await attach(app, owner, recordUrl(other.sourceId, other.recordIds[0]!, '/attachments'), image, { 'content-type': 'image/png' })).status, 201);
  t.equal(filesUnder(attachmentsDir(app)).length, 3);

  // New rows are new records: the old records' attachments go, rows and files.
  const patched = await app.json(`/api/v1/data-sources/${sourceId}`, { method: 'PATCH', headers: owner.headers, json: { rows: [{ dish: 'Soup' }] } });
  t.equal(patched.status, 200);
  t.same(filesUnder(path.join(attachmentsDir(app), sourceId)), [], 'the replaced records’ files are gone');
  t.equal((await app.deps.db.selectFrom('data_source_record_attachments').select('id').where('source_id', '=', sourceId).execute()).length, 0);

  const fresh = (await app.deps.db.selectFrom('data_source_rows').select('id').where('source_id', '=', sourceId).execute()).map((r) => r.id);
  t.equal((await attach(app, owner, recordUrl(sourceId, fresh[0]!, '/attachments'), image, { 'content-type': 'image/png' })).status, 201);
  const removed = await app.fetch(`/api/v1/data-sources/${sourceId}`, { method: 'DELETE', headers: owner.headers });
  t.equal(removed.status, 204);
  t.notOk(existsSync(path.join(attachmentsDir(app), sourceId)), 'the table’s attachment folder is gone');
  t.equal(filesUnder(attachmentsDir(app)).length, 1, 'another table’s attachment stays');
  t.equal((await app.deps.db.selectFrom('data_source_record_attachments').select('id').execute()).length, 1);
});

/**
 * A POST with the body sent as `chunks` by node:http (fetch cannot send a chunked body
 * that the server refuses midway and still read the answer): the status and error code.
 */
function rawPost(app: TestApp, who: SignedIn, p: string, chunks: Buffer[], headers: Record<string, string>): Promise<{ status: number; code: string | null }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${app.url}${p}`, { method: 'POST', headers: { ...who.headers, ...headers } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, code: text ? (JSON.parse(text).error?.code ?? null) : null }));
    });
    req.on('error', (err) =>
      (err as NodeJS.ErrnoException).code === 'EPIPE' || (err as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(err),
    );
    (async () => {
      for (const c of chunks) {
        if (req.destroyed) return;
        if (!req.write(c)) await new Promise((r) => req.once('drain', r));
      }
      req.end();
    })().catch(() => {});
  });
}
