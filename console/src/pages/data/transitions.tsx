import { useState } from 'preact/hooks';
import { api, ApiError } from '../../api';
import { ErrorNote, useAction } from '../../ui';
import { Field as FieldBox } from '../../ui/fields';
import { type DataRecord, type Move, moveWords } from './records-model';

/**
 * The workflow transitions a person may take on a record (issue 18): one button each, and a
 * comment box they share. A transition that needs a comment says so before asking the server
 * (which checks it again); If-Match carries the record's revision, so a record changed
 * meanwhile is refused (412) instead of moved blind.
 */
export function TransitionActions({
  record,
  moves,
  label,
  onDone,
}: {
  record: DataRecord;
  moves: readonly Move[];
  /** Names the group for assistive technology ("Workflow of Truffle pasta"). */
  label: string;
  onDone: (next: DataRecord, move: Move) => void;
}) {
  const [comment, setComment] = useState('');
  const [missing, setMissing] = useState<string | null>(null);
  const take = useAction(async (move: Move) => {
    if (move.commentRequired && comment.trim() === '') {
      setMissing(`${moveWords(move)} needs a comment saying why.`);
      return;
    }
    setMissing(null);
    const next = await api.post<DataRecord>(
      `data-sources/${record.sourceId}/records/${record.id}/transitions`,
      { transition: move.name, ...(comment.trim() ? { comment: comment.trim() } : {}) },
      { headers: { 'if-match': `"${record.revision}"` } },
    );
    setComment('');
    onDone(next, move);
  });
  if (moves.length === 0) return null;
  const needs = moves.filter((m) => m.commentRequired).map((m) => moveWords(m).toLowerCase());
  const serverSays = take.error instanceof ApiError ? take.error.fieldMessage('comment') : undefined;
  return (
    <fieldset class="transitions" aria-label={label}>
      <FieldBox label={needs.length ? `Comment (needed to ${needs.join(' or ')})` : 'Comment (optional)'} error={missing ?? serverSays}>
        {(p) => <textarea {...p} rows={2} value={comment} onInput={(e) => setComment(e.currentTarget.value)} />}
      </FieldBox>
      <div class="row">
        {moves.map((m) => (
          <button
            key={m.name}
            type="button"
            class={m.name === 'reject' || m.to === 'rejected' ? 'contrast outline' : undefined}
            aria-busy={take.busy}
            disabled={take.busy}
            onClick={() => void take.run(m)}
          >
            {moveWords(m)}
          </button>
        ))}
      </div>
      {!serverSays && <ErrorNote error={take.error} />}
    </fieldset>
  );
}
