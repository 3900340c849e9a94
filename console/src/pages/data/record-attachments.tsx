import { useRef, useState } from 'preact/hooks';
import { api, ApiError, uploadFile } from '../../api';
import type { components } from '../../api-schema';
import { ErrorNote, formatTime, useAction } from '../../ui';
import { confirmAction } from '../../ui/confirm';
import { Field as FieldBox } from '../../ui/fields';

/**
 * A record's attachments (issue 18, docs/data-sources.md "Comments and attachments"): listed
 * from the record detail's `attachments`, each opened through its content url; editors
 * upload (images and PDF, the bytes decide) and remove them. The server's 413 and 415 are
 * said in words.
 */

export type Attachment = components['schemas']['RecordAttachment'];

const ACCEPT = 'image/png,image/jpeg,image/webp,image/gif,application/pdf';

const sizeText = (bytes: number) =>
  bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(0)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** An upload refusal in words (413 too big, 415 not an image or PDF, 409 too many); other errors as they are. */
export function uploadProblem(error: unknown): string | null {
  if (!(error instanceof ApiError)) return null;
  if (error.status === 413) return 'That file is too big: an attachment may be at most 25 MB. Nothing was kept.';
  if (error.status === 415) return 'That file is not a PNG, JPEG, WebP or GIF image or a PDF (its contents decide, not its name). Nothing was kept.';
  if (error.status === 409) return error.message;
  return null;
}

export function Attachments({
  path,
  items,
  canEdit,
  onChanged,
}: {
  /** data-sources/{id}/records/{recordId}/attachments */
  path: string;
  items: Attachment[];
  canEdit: boolean;
  onChanged: () => void;
}) {
  const input = useRef<HTMLInputElement>(null);
  const [file, setFile] = useState<File | null>(null);
  const upload = useAction(async () => {
    if (!file) throw new Error('Choose a file first.');
    await uploadFile<Attachment>(`${path}?name=${encodeURIComponent(file.name)}`, file, {
      contentType: file.type || 'application/octet-stream',
    });
    setFile(null);
    if (input.current) input.current.value = '';
    onChanged();
  });
  const remove = useAction(async (a: Attachment) => {
    const yes = await confirmAction({
      title: `Remove “${a.fileName}”?`,
      body: <p>The file goes from this record; this cannot be undone.</p>,
      confirmLabel: 'Remove the attachment',
      danger: true,
    });
    if (!yes) return;
    await api.del(`${path}/${a.id}`);
    onChanged();
  });
  const problem = uploadProblem(upload.error);
  return (
    <section aria-labelledby="attachments-h" data-testid="record-attachments">
      <h4 id="attachments-h">Attachments</h4>
      {items.length === 0 ? (
        <p class="muted">No attachments.</p>
      ) : (
        <ul class="record-attachments">
          {items.map((a) => (
            <li key={a.id} data-attachment={a.id}>
              <a href={a.url} target="_blank" rel="noopener">
                {a.fileName}
              </a>{' '}
              <small class="muted">
                {a.contentType === 'application/pdf' ? 'PDF' : 'image'}, {sizeText(a.sizeBytes)}, {formatTime(a.createdAt)}
              </small>
              {canEdit && (
                <button
                  type="button"
                  class="secondary outline small"
                  aria-label={`Remove ${a.fileName}`}
                  disabled={remove.busy}
                  onClick={() => void remove.run(a)}
                >
                  Remove
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      <ErrorNote error={remove.error} />
      {canEdit && (
        <form
          aria-label="Upload an attachment"
          onSubmit={(e) => {
            e.preventDefault();
            void upload.run();
          }}
        >
          <FieldBox label="Attach a file" help="A PNG, JPEG, WebP or GIF image, or a PDF; at most 25 MB." error={problem ?? undefined}>
            {(p) => <input {...p} ref={input} type="file" accept={ACCEPT} onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} />}
          </FieldBox>
          <ErrorNote error={problem ? null : upload.error} />
          <button type="submit" class="secondary" aria-busy={upload.busy} disabled={upload.busy || !file}>
            Upload
          </button>
        </form>
      )}
    </section>
  );
}
