/**
 * The builder's playlist part (playlist-parts.ts): what `Builder.playlist` made of a playlist
 * for one box, fit and sound, and its JSON text, made once and attached to the frozen playlist
 * so a manifest's serialisation (manifest.ts `serialise`) does not make it again.
 */
import type { ManifestMedia, ManifestPlaylist } from './manifest.shapes.js';
import type { KeptBuilt } from './playlist-parts.js';
import type { Warning } from './playable.js';
import type { WidgetBundleAnswer } from '../widgets/index.js';

/** What `Builder.playlist` made of a playlist for one (box, fit, muted), and everything it did on the way (playlist-parts.ts). */
export interface BuiltPart extends KeptBuilt {
  /** Frozen (freezePlaylist): every manifest that shows it shares it. */
  playlist: ManifestPlaylist;
  /** Every `warn` call, in order (the build keeps the first of each key). */
  warnings: readonly (readonly [string, Warning])[];
  /** Every media entry the items use. */
  media: readonly ManifestMedia[];
  /** Every widget bundle asked, with the box it is shown in. */
  widgets: readonly { widgetId: string; answer: WidgetBundleAnswer; box: { width: number; height: number } }[];
}

/** Where a kept playlist carries its JSON text (a symbol: JSON.stringify does not see it). */
const TEXT = Symbol('json');

/**
 * Freezes the playlist, its item list and its items (a part's playlist is shared by every
 * manifest showing it), with its JSON text attached for `playlistText`.
 */
export function freezePlaylist(playlist: ManifestPlaylist, text: string): ManifestPlaylist {
  for (const item of playlist.items) Object.freeze(item);
  Object.freeze(playlist.items);
  Object.defineProperty(playlist, TEXT, { value: text });
  return Object.freeze(playlist);
}

/** `JSON.stringify(playlist)`: made once for a kept part's playlist, else now. */
export function playlistText(playlist: ManifestPlaylist): string {
  return (playlist as ManifestPlaylist & { [TEXT]?: string })[TEXT] ?? JSON.stringify(playlist);
}
