import { api, qs } from '../api';
import type { operations } from '../api-schema';
import { ErrorNote, formatTime, useLoad } from '../ui';

/**
 * Compare (issue 20, docs/publishing.md "History"): what changed between two versions of an
 * item, side by side. `from` and `to` are publication ids or the keywords `published` and
 * `draft` (GET /content-history/{type}/{id}/compare). Fields changed (before | after), then
 * items (zones, playlist entries...) added, removed, moved and changed, in plain words.
 */
export type ContentType = 'playlist' | 'layout' | 'schedule' | 'widget' | 'campaign';

type Compare = operations['getContentHistoryByTypeByIdCompare']['responses'][200]['content']['application/json']['data'];
type Side = Compare['from'];
type FieldChange = Compare['fields'][number];

/** "backgroundColor" / "background_color" -> "Background color". */
export function fieldWords(field: string): string {
  const spaced = field
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_.]/g, ' ')
    .toLowerCase();
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
}

/** A compared value in words: none, yes/no, text as is, lists and objects spelled out ("Color: #000000, Asset id: (none)"). */
export function valueWords(value: unknown): string {
  if (value === null || value === undefined || value === '') return '(none)';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'string' || typeof value === 'number') return String(value);
  if (Array.isArray(value)) return value.length === 0 ? '(none)' : value.map(valueWords).join('; ');
  if (typeof value === 'object')
    return Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${fieldWords(k)}: ${valueWords(v)}`)
      .join(', ');
  return JSON.stringify(value);
}

function sideWords(side: Side): string {
  if (side.kind === 'draft') return 'Draft';
  const p = side.publication;
  return p ? `Publication ${p.number} (${formatTime(p.publishedAt)})` : 'Published';
}

function Fields({ changes, label }: { changes: FieldChange[]; label: string }) {
  return (
    <table class="compare-fields" aria-label={label}>
      <thead>
        <tr>
          <th scope="col">Field</th>
          <th scope="col">Before</th>
          <th scope="col">After</th>
        </tr>
      </thead>
      <tbody>
        {changes.map((c) => (
          <tr key={c.field} data-field={c.field}>
            <th scope="row">{fieldWords(c.field)}</th>
            <td class="compare-before">
              <del>{valueWords(c.from)}</del>
            </td>
            <td class="compare-after">
              <ins>{valueWords(c.to)}</ins>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function CompareView(props: { type: ContentType; id: string; from: string; to: string }) {
  const { type, id, from, to } = props;
  const diff = useLoad(
    () => api.get<Compare>(`content-history/${encodeURIComponent(type)}/${encodeURIComponent(id)}/compare${qs({ from, to })}`),
    [type, id, from, to],
  );
  if (diff.error) return <ErrorNote error={diff.error} />;
  const d = diff.data;
  if (!d)
    return (
      <p aria-busy="true" class="muted">
        Comparing…
      </p>
    );
  const { added, removed, moved, changed } = d.items;
  return (
    <section class="compare" aria-label="Changes" data-testid="compare">
      <p class="compare-sides">
        <strong>{sideWords(d.from)}</strong> → <strong>{sideWords(d.to)}</strong>
      </p>
      {d.identical && <p class="muted">No differences: both sides are the same.</p>}
      {d.fields.length > 0 && <Fields changes={d.fields} label="Changed settings" />}
      {(added.length > 0 || removed.length > 0 || moved.length > 0 || changed.length > 0) && (
        <ul class="compare-items" aria-label="Changed items">
          {added.map((i) => (
            <li key={`a${i.key}`} class="compare-added">
              <span class="badge ok">Added</span> {i.label}
            </li>
          ))}
          {removed.map((i) => (
            <li key={`r${i.key}`} class="compare-removed">
              <span class="badge bad">Removed</span> {i.label}
            </li>
          ))}
          {moved.map((i) => (
            <li key={`m${i.key}`}>
              <span class="badge">Moved</span> {i.label}: from position {i.fromIndex + 1} to {i.toIndex + 1}
            </li>
          ))}
          {changed.map((i) => (
            <li key={`c${i.key}`}>
              <span class="badge warn">Changed</span> {i.label}
              <Fields changes={i.fields} label={`Changes to ${i.label}`} />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
