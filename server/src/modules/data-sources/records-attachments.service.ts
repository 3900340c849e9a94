import fs from 'node:fs/promises';
import path from 'node:path';
import type { Context } from 'koa';
import type { Db } from '../../platform/db/database.js';
import { durableRename } from '../../platform/db/database.js';
import { newId, nowIso } from '../../platform/db/ids.js';
import { ApiError, isDiskFull, notFound } from '../../platform/http/errors.js';
import { receiveFile } from '../../platform/http/receive-file.js';
import { sendFile } from '../../platform/http/send-file.js';
import { sniffFile } from '../../platform/media/sniff.js';
import { hashFile } from '../../platform/media/store.js';
import { type AccessLevel, requireLevel } from './access.js';
import { getSourceRow } from './data-sources.repo.js';
import type { Env } from './data-sources.service.js';
import { type Actor, appendEvent, findRecord, type RecordRow } from './records.repo.js';
import { type AttachmentRow, attachmentCount, attachmentRowsOf, deleteAttachmentRow, findAttachmentRow, insertAttachment } from './records-attachments.repo.js';
import { attachmentsTmpDir, deleteAttachmentFile, fileOfKey, storageKeyOf } from './records-attachments.files.js';
import { ATTACHMENT_TYPES, type AttachmentDto, MAX_ATTACHMENT_BYTES, MAX_ATTACHMENTS_PER_RECORD } from './records-attachments.schemas.js';

/**
 * Attachments of records (issue 18, docs/data-sources.md "Comments and attachments"): one
 * file per request, streamed to a temp file, size-limited, its type decided from its bytes
 * (images and PDF only), then moved under media/attachments and recorded with an audit entry.
 */

type AttachmentType = (typeof ATTACHMENT_TYPES)[number];

const actorOf = (env: Env): Actor => ({ userId: env.caller.userId, tokenId: null });

/** The record, after the source exists and the caller has `needed` on it (403), and the record is the source's (404). */
export async function recordFor(env: Env, db: Db, sourceId: string, recordId: string, needed: AccessLevel): Promise<RecordRow> {
  const source = await getSourceRow(db, sourceId);
  await requireLevel(db, env.caller, sourceId, needed, source.name);
  return findRecord(db, sourceId, recordId);
}

export function attachmentDto(row: AttachmentRow): AttachmentDto {
  return {
    id: row.id,
    recordId: row.record_id,
    fileName: row.file_name,
    contentType: row.content_type as AttachmentType,
    sizeBytes: row.size_bytes,
    sha256: row.sha256,
    createdBy: row.created_by,
    createdAt: row.created_at,
    url: `/api/v1/data-sources/${row.source_id}/records/${row.record_id}/attachments/${row.id}/content`,
  };
}

/** The attachments of some records of a table, oldest first per record (for record answers). */
export async function attachmentsOf(db: Db, sourceId: string, recordIds: readonly string[]): Promise<Map<string, AttachmentDto[]>> {
  const out = new Map<string, AttachmentDto[]>();
  for (const row of await attachmentRowsOf(db, sourceId, recordIds)) {
    const list = out.get(row.record_id) ?? [];
    list.push(attachmentDto(row));
    out.set(row.record_id, list);
  }
  return out;
}

function tooMany(): ApiError {
  return new ApiError('conflict', `A record may have at most ${MAX_ATTACHMENTS_PER_RECORD} attachments; remove one first`);
}

/** A file name for people: no control characters or path separators, bounded; from the type when none is usable. */
export function cleanFileName(name: string | null, contentType: AttachmentType): string {
  const ext = contentType === 'application/pdf' ? 'pdf' : contentType.split('/')[1]!.replace('jpeg', 'jpg');
  const base = (name ?? '')
    .normalize('NFC')
    .replace(/[\u0000-\u001f\u007f-\u009f/\\]/g, '')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^\.+/, '')
    .slice(0, 200)
    .trim();
  return base || `attachment.${ext}`;
}

async function fsyncFile(file: string): Promise<void> {
  const handle = await fs.open(file, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * POST .../attachments: checks access (editor), the record and the count before reading the
 * body, receives the file, sniffs it, hashes it, puts it in place (fsynced, renamed), then
 * records the row and the audit entry in one transaction that checks the count again. Any
 * refusal leaves no file behind.
 */
export async function addAttachment(env: Env, ctx: Context, sourceId: string, recordId: string): Promise<AttachmentDto> {
  const db = env.deps.db;
  const record = await recordFor(env, db, sourceId, recordId, 'editor');
  if ((await attachmentCount(db, record.id)) >= MAX_ATTACHMENTS_PER_RECORD) throw tooMany();

  const got = await receiveFile(ctx, { dir: attachmentsTmpDir(env.deps), maxBytes: MAX_ATTACHMENT_BYTES, field: 'file', what: 'An attachment' });
  let placed: string | null = null;
  try {
    const sniffed = await sniffFile(got.file);
    if (!sniffed || !(ATTACHMENT_TYPES as readonly string[]).includes(sniffed.contentType)) {
      const found = sniffed ? `${sniffed.contentType} files are` : 'This file type is';
      throw new ApiError('unsupported_media_type', `${found} not accepted as attachments: send a PNG, JPEG, WebP or GIF image, or a PDF`);
    }
    const contentType = sniffed.contentType as AttachmentType;
    const { sha256, size } = await hashFile(got.file);
    const id = newId();
    const key = storageKeyOf(sourceId, record.id, id);
    const target = fileOfKey(env.deps, key);
    await fsyncFile(got.file);
    await fs.mkdir(path.dirname(target), { recursive: true });
    durableRename(got.file, target);
    placed = key;
    const row: AttachmentRow = {
      id,
      source_id: sourceId,
      record_id: record.id,
      file_name: cleanFileName(got.clientName, contentType),
      content_type: contentType,
      size_bytes: size,
      sha256,
      storage_key: key,
      created_by: env.caller.userId,
      created_by_token: null,
      created_at: nowIso(),
    };
    await db.transaction().execute(async (trx) => {
      await findRecord(trx, sourceId, record.id); // deleted meanwhile: 404
      if ((await attachmentCount(trx, record.id)) >= MAX_ATTACHMENTS_PER_RECORD) throw tooMany();
      await insertAttachment(trx, row);
      await appendEvent(
        trx,
        sourceId,
        record.id,
        'attachment_added',
        actorOf(env),
        { attachmentId: id, fileName: row.file_name, contentType, sizeBytes: size, sha256 },
        row.created_at,
      );
    });
    placed = null;
    return attachmentDto(row);
  } catch (err) {
    if (isDiskFull(err)) throw new ApiError('insufficient_storage', 'The disk is full; the attachment was not kept');
    throw err;
  } finally {
    await fs.rm(got.file, { force: true });
    if (placed) await deleteAttachmentFile(env.deps, placed).catch(() => {});
  }
}

async function findAttachment(db: Db, sourceId: string, recordId: string, attachmentId: string): Promise<AttachmentRow> {
  const row = await findAttachmentRow(db, sourceId, recordId, attachmentId);
  if (!row) throw notFound(`Attachment ${attachmentId} of this record`);
  return row;
}

/** DELETE .../attachments/{attachmentId}: the row and the audit entry in one transaction, then the file. */
export async function removeAttachment(env: Env, sourceId: string, recordId: string, attachmentId: string): Promise<void> {
  const db = env.deps.db;
  const row = await db.transaction().execute(async (trx) => {
    const record = await recordFor(env, trx, sourceId, recordId, 'editor');
    const found = await findAttachment(trx, sourceId, record.id, attachmentId);
    await deleteAttachmentRow(trx, found.id);
    await appendEvent(trx, sourceId, record.id, 'attachment_removed', actorOf(env), { attachmentId: found.id, fileName: found.file_name });
    return found;
  });
  await deleteAttachmentFile(env.deps, row.storage_key);
}

/** Served to people: nothing in it can run or load anything (a PDF viewer's script, an image document's extras). */
export const ATTACHMENT_CSP = "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; sandbox";

/**
 * GET .../content: the bytes with the sniffed type, nosniff, ETag (sha256) and 304, Range,
 * a restrictive CSP; images inline, PDFs as a download; the file name in Content-Disposition
 * made safe (platform/http/send-file.ts: the content-disposition package, RFC 6266/5987).
 */
export async function serveAttachment(env: Env, ctx: Context, sourceId: string, recordId: string, attachmentId: string): Promise<void> {
  const db = env.deps.db;
  const record = await recordFor(env, db, sourceId, recordId, 'viewer');
  const row = await findAttachment(db, sourceId, record.id, attachmentId);
  await sendFile(ctx, {
    path: fileOfKey(env.deps, row.storage_key),
    contentType: row.content_type,
    etag: row.sha256,
    disposition: { type: row.content_type.startsWith('image/') ? 'inline' : 'attachment', filename: row.file_name },
    cacheControl: 'private, no-cache',
    csp: ATTACHMENT_CSP,
  });
}
