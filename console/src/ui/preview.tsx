import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api';
import type { Asset, Playlist, PlaylistItem } from '../types';

/**
 * Seeing before publishing: a playlist played in the console (items in order, each for its
 * duration, with its fit), and a layout drawn at its own size (scaled to the page) with
 * each zone showing its content, still (thumbnails) or playing.
 */

export type Fit = 'contain' | 'cover' | 'fill';
const objectFit = (fit: Fit) => (fit === 'fill' ? 'fill' : fit);

/** Website addresses of assets, fetched once per asset id (the playlist item carries only the id). */
const siteUrls = new Map<string, Promise<string | null>>();
function websiteUrl(assetId: string): Promise<string | null> {
  let p = siteUrls.get(assetId);
  if (!p) {
    p = api.get<Asset>(`assets/${assetId}`).then(
      (a) => a.website?.url ?? null,
      () => null,
    );
    siteUrls.set(assetId, p);
  }
  return p;
}

/** One item, as a screen would draw it (muted video; websites in a sandboxed frame). */
function ItemView({ item, fit, onEnded }: { item: PlaylistItem; fit: Fit; onEnded?: () => void }) {
  const [url, setUrl] = useState<string | null>(null);
  useEffect(() => {
    if (item.assetKind === 'website' && item.assetId) void websiteUrl(item.assetId).then(setUrl);
  }, [item.assetId, item.assetKind]);
  const style = { width: '100%', height: '100%', objectFit: objectFit(fit) } as const;
  const src = item.assetId ? `/api/v1/assets/${item.assetId}/preview` : null;
  if (!item.assetId) return <div class="preview-card">{item.label ?? 'Nested playlist'}</div>;
  switch (item.assetKind) {
    case 'image':
    case 'pdf':
      return <img src={src!} alt={item.label ?? ''} style={style} />;
    case 'video':
      return <video src={src!} muted autoplay playsInline style={style} onEnded={onEnded} aria-label={item.label ?? 'video'} />;
    case 'audio':
      return (
        <div class="preview-card">
          <span>♪ {item.label}</span>
          <audio src={src!} autoplay muted onEnded={onEnded} />
        </div>
      );
    case 'website':
      return url ? (
        <iframe
          src={url}
          title={`Website ${item.label ?? ''}`}
          sandbox="allow-scripts allow-same-origin"
          referrerpolicy="no-referrer"
          style={{ width: '100%', height: '100%', border: 0, background: '#fff' }}
        />
      ) : (
        <div class="preview-card">{item.label}</div>
      );
    default:
      return <div class="preview-card">{item.label ?? item.assetKind}</div>;
  }
}

/** Items screens would play now (enabled, inside their validity window). */
function playable(items: PlaylistItem[], now = Date.now()): PlaylistItem[] {
  return items.filter((i) => i.enabled && (!i.validFrom || Date.parse(i.validFrom) <= now) && (!i.validUntil || Date.parse(i.validUntil) > now));
}

/**
 * Plays a playlist: each item for its duration (a video to its end), round and round.
 * `controls` adds play/pause, previous and next with where it is; without them (zones of a
 * layout preview) it just plays.
 */
export function PlaylistPlayer({
  playlist,
  fit = 'contain',
  controls = true,
  aspect = '16 / 9',
}: {
  playlist: Pick<Playlist, 'name' | 'items'>;
  fit?: Fit;
  controls?: boolean;
  aspect?: string | null;
}) {
  const items = playable(playlist.items);
  const [index, setIndex] = useState(0);
  const [playing, setPlaying] = useState(true);
  const item = items.length ? items[index % items.length] : undefined;
  const next = () => setIndex((i) => (items.length ? (i + 1) % items.length : 0));
  const prev = () => setIndex((i) => (items.length ? (i - 1 + items.length) % items.length : 0));
  useEffect(() => {
    if (!playing || !item) return;
    // A video or audio without its own duration plays to its end (plus a safety margin).
    const ownEnd = (item.assetKind === 'video' || item.assetKind === 'audio') && item.durationMs === null;
    const timer = setTimeout(next, ownEnd ? item.effectiveDurationMs + 2_000 : item.effectiveDurationMs);
    return () => clearTimeout(timer);
  }, [playing, item?.id, index, items.length]);
  return (
    <div class="playlist-player">
      <div class="player-stage" style={aspect ? { aspectRatio: aspect } : { height: '100%' }} data-testid="player-stage" data-item={item?.label ?? ''}>
        {item ? (
          <div
            class="player-item"
            key={`${item.id}:${index}`}
            style={{ animation: item.transition.type === 'fade' ? `placard-fade ${item.transition.durationMs || 700}ms` : undefined }}
          >
            <ItemView item={item} fit={fit} onEnded={() => item.durationMs === null && next()} />
          </div>
        ) : (
          <div class="preview-card">Nothing to play now{playlist.items.length ? ' (every item is skipped or outside its dates)' : ''}</div>
        )}
      </div>
      {controls && items.length > 0 && (
        <div class="row player-controls">
          <button type="button" class="secondary outline small" aria-label="Previous item" onClick={prev}>
            ⏮
          </button>
          <button type="button" class="small" onClick={() => setPlaying((p) => !p)} aria-pressed={!playing}>
            {playing ? 'Pause' : 'Play'}
          </button>
          <button type="button" class="secondary outline small" aria-label="Next item" onClick={next}>
            ⏭
          </button>
          <small aria-live="polite">
            {(index % items.length) + 1} of {items.length}: {item?.label ?? '—'} ({Math.round((item?.effectiveDurationMs ?? 0) / 100) / 10} s)
          </small>
        </div>
      )}
    </div>
  );
}

export interface PreviewZone {
  name: string;
  x: number;
  y: number;
  width: number;
  height: number;
  zIndex: number;
  fit: Fit;
  content: { type: string; playlistId?: string; assetId?: string; durationMs?: number | null } | null;
}

/** Playlists' details for the zones that play them (fetched once each). */
export function usePlaylists(ids: string[]): Map<string, Playlist> {
  const [map, setMap] = useState<Map<string, Playlist>>(new Map());
  const key = [...new Set(ids)].sort().join(',');
  useEffect(() => {
    let live = true;
    const wanted = key ? key.split(',') : [];
    Promise.all(wanted.map((id) => api.get<Playlist>(`playlists/${id}`).catch(() => null))).then((list) => {
      if (!live) return;
      const m = new Map<string, Playlist>();
      for (const p of list) if (p) m.set(p.id, p);
      setMap(m);
    });
    return () => void (live = false);
  }, [key]);
  return map;
}

/** The picture that stands for a zone's content: the asset's thumbnail, or its playlist's first item's. */
export function zoneThumbnail(zone: PreviewZone, playlists: Map<string, Playlist>, assets: Asset[]): { src: string; label: string } | null {
  const c = zone.content;
  const thumbOf = (id: string | null | undefined) => {
    if (!id) return null;
    const a = assets.find((x) => x.id === id);
    if (a && !a.variants.some((v) => v.purpose === 'thumbnail')) return null;
    return `/api/v1/assets/${id}/thumbnail`;
  };
  if (c?.type === 'asset') {
    const src = thumbOf(c.assetId);
    return src ? { src, label: assets.find((a) => a.id === c.assetId)?.name ?? 'media' } : null;
  }
  if (c?.type === 'playlist' && c.playlistId) {
    const p = playlists.get(c.playlistId);
    const first = p ? playable(p.items).find((i) => i.assetId) : undefined;
    const src = thumbOf(first?.assetId);
    return src ? { src, label: first?.label ?? p?.name ?? 'playlist' } : null;
  }
  return null;
}

/**
 * A layout at its own size (its canvas in real pixels, scaled down to the box), each zone
 * playing its playlist or media with its fit: what a screen of that size shows.
 */
export function LayoutLivePreview({
  width,
  height,
  background,
  zones,
  assets,
}: {
  width: number;
  height: number;
  background: string;
  zones: PreviewZone[];
  assets: Asset[];
}) {
  const box = useRef<HTMLDivElement>(null);
  const [scale, setScale] = useState(0.3);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const measure = () => setScale(el.clientWidth / width);
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, [width]);
  const playlists = usePlaylists(zones.filter((z) => z.content?.type === 'playlist').map((z) => z.content!.playlistId!));
  return (
    <div
      class="layout-live"
      ref={box}
      style={{ aspectRatio: `${width} / ${height}` }}
      role="img"
      aria-label={`Live preview at ${width} by ${height}`}
      data-testid="layout-live"
    >
      <div style={{ width: `${width}px`, height: `${height}px`, transform: `scale(${scale})`, transformOrigin: '0 0', position: 'relative', background }}>
        {[...zones]
          .sort((a, b) => a.zIndex - b.zIndex)
          .map((z, i) => {
            const c = z.content;
            let inner = null;
            if (c?.type === 'playlist' && c.playlistId) {
              const p = playlists.get(c.playlistId);
              inner = p ? <PlaylistPlayer playlist={p} fit={z.fit} controls={false} aspect={null} /> : null;
            } else if (c?.type === 'asset' && c.assetId) {
              const a = assets.find((x) => x.id === c.assetId);
              const item = {
                id: `zone-${i}`,
                position: 0,
                type: 'asset',
                assetId: c.assetId,
                playlistId: null,
                label: a?.name ?? 'media',
                assetKind: a?.kind ?? 'image',
                assetState: a?.state ?? 'ready',
                durationMs: c.durationMs ?? null,
                effectiveDurationMs: c.durationMs ?? 10_000,
                validFrom: null,
                validUntil: null,
                dayparts: [],
                transition: { type: 'none', durationMs: 0 },
                enabled: true,
              } as PlaylistItem;
              inner = <PlaylistPlayer playlist={{ name: item.label!, items: [item] }} fit={z.fit} controls={false} aspect={null} />;
            }
            return (
              <div
                key={i}
                class="live-zone"
                data-zone={z.name}
                style={{ left: `${z.x}px`, top: `${z.y}px`, width: `${z.width}px`, height: `${z.height}px`, zIndex: z.zIndex }}
              >
                {inner}
              </div>
            );
          })}
      </div>
    </div>
  );
}
