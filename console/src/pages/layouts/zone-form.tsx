import type { Asset, PlaylistSummary } from '../../types';
import type { DataSource } from '../data/shared';
import { type Content, isData, type Zone } from './model';

/**
 * The selected zone's properties: name, place and size, what it plays (a playlist, one piece
 * of media, or a data source's rows), seconds per showing, fit. A data zone's view is edited
 * below the canvas (data-zone.tsx), where its preview table has room.
 */

/** The "Plays" choice a zone's content stands for ('keep': a kind this editor does not offer). */
export function zoneValue(z: Zone): string {
  const c = z.content;
  if (c?.type === 'playlist') return `playlist:${(c as { playlistId: string }).playlistId}`;
  if (c?.type === 'asset') return `asset:${(c as { assetId: string }).assetId}`;
  if (isData(c)) return `data:${c.sourceId}`;
  if (c?.type === 'widget') return `widget:${String(c.widgetId)}`;
  return c ? 'keep' : '';
}

/** The content a "Plays" choice makes, keeping what still applies (an asset's seconds, a source's view). */
export function contentFor(value: string, before: Zone['content']): Zone['content'] {
  if (!value) return null;
  const [kind, ref] = value.split(':') as [string, string];
  if (kind === 'asset')
    return { type: 'asset', assetId: ref, durationMs: before?.type === 'asset' ? ((before as { durationMs: number | null }).durationMs ?? null) : null };
  // A view names its source's fields: another source starts from the whole of it.
  if (kind === 'widget') return { type: 'widget', widgetId: ref };
  if (kind === 'data') return { type: 'data', sourceId: ref, view: isData(before) && before.sourceId === ref ? before.view : null };
  return { type: 'playlist', playlistId: ref };
}

export function ZoneForm({
  zone,
  canEdit,
  playlists,
  assets,
  sources,
  widgets,
  edit,
  onRemove,
}: {
  zone: Zone;
  canEdit: boolean;
  playlists: PlaylistSummary[];
  assets: Asset[];
  sources: DataSource[] | undefined;
  /** The widgets this user may read (issue 19). */
  widgets?: { id: string; name: string }[];
  /** Changes the selected zone of the draft. */
  edit: (fn: (z: Zone, c: Content) => void) => void;
  onRemove: () => void;
}) {
  const value = zoneValue(zone);
  const source = isData(zone.content) ? sources?.find((s) => s.id === (zone.content as { sourceId: string }).sourceId) : undefined;
  return (
    <fieldset disabled={!canEdit} aria-label="Selected zone" class="zone-form">
      <label>
        Zone name
        <input value={zone.name} maxLength={100} onInput={(e) => edit((z) => void (z.name = e.currentTarget.value))} />
      </label>
      <div class="grid two">
        {(['x', 'y', 'width', 'height'] as const).map((k) => (
          <label key={k}>
            {k}
            <input
              type="number"
              min={k === 'width' || k === 'height' ? 1 : 0}
              value={zone[k]}
              onChange={(e) => edit((z) => void (z[k] = Math.max(0, Math.round(Number(e.currentTarget.value) || 0))))}
            />
          </label>
        ))}
      </div>
      <label>
        Plays
        <select
          value={value}
          onChange={(e) => {
            const v = e.currentTarget.value;
            if (v !== 'keep') edit((z) => void (z.content = contentFor(v, z.content)));
          }}
        >
          <option value="">Nothing</option>
          {zone.content && value === 'keep' && <option value="keep">{zone.content.type} (kept as is)</option>}
          <optgroup label="Playlists">
            {playlists.map((p) => (
              <option key={p.id} value={`playlist:${p.id}`}>
                {p.name}
              </option>
            ))}
          </optgroup>
          <optgroup label="One piece of media">
            {assets.map((a) => (
              <option key={a.id} value={`asset:${a.id}`}>
                {a.name}
                {a.state === 'ready' ? '' : ` (${a.state})`}
              </option>
            ))}
          </optgroup>
          <optgroup label="Data (rows as a table)">
            {(sources ?? []).map((s) => (
              <option key={s.id} value={`data:${s.id}`}>
                {s.name}
              </option>
            ))}
            {/* A source this user may not read (or gone) still shows what the zone holds. */}
            {isData(zone.content) && sources && !source && <option value={value}>a data source you cannot see</option>}
          </optgroup>
          <optgroup label="Widgets">
            {(widgets ?? []).map((w) => (
              <option key={w.id} value={`widget:${w.id}`}>
                {w.name}
              </option>
            ))}
            {zone.content?.type === 'widget' && widgets && !widgets.some((w) => value === `widget:${w.id}`) && (
              <option value={value}>a widget since deleted</option>
            )}
          </optgroup>
        </select>
      </label>
      {isData(zone.content) && (
        <p class="muted" data-testid="zone-data-summary">
          {zone.content.view ? 'Some rows and fields (a view): see below.' : 'All its rows; choose some below (a view).'}
        </p>
      )}
      {zone.content?.type === 'asset' && (
        <label>
          Seconds per showing
          <input
            type="number"
            min="0.5"
            step="0.5"
            placeholder="its own length, or 10"
            value={(zone.content as { durationMs: number | null }).durationMs ? String((zone.content as { durationMs: number }).durationMs / 1000) : ''}
            onChange={(e) => {
              const sec = Number(e.currentTarget.value);
              edit((z) => void ((z.content as { durationMs: number | null }).durationMs = sec > 0 ? Math.max(500, Math.round(sec * 1000)) : null));
            }}
          />
        </label>
      )}
      {!isData(zone.content) && (
        <label>
          Fit
          <select value={zone.fit} onChange={(e) => edit((z) => void (z.fit = e.currentTarget.value as Zone['fit']))}>
            <option value="contain">Contain (whole picture)</option>
            <option value="cover">Cover (fill, crop)</option>
            <option value="fill">Stretch</option>
          </select>
        </label>
      )}
      <button type="button" class="contrast outline small" onClick={onRemove}>
        Remove zone
      </button>
    </fieldset>
  );
}
