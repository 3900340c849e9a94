import { useRef } from 'preact/hooks';
import type { DataSource } from '../data/shared';
import { ZoneDataPreview } from './data-zone';
import { type Content, isData, type Zone } from './model';

/** The canvas: each zone drawn where it sits, with its content's picture; zones are dragged to move them. */
export function Canvas({
  content,
  selected,
  onSelect,
  canEdit,
  label,
  source,
  thumb,
  onMove,
}: {
  content: Content;
  selected: number;
  onSelect: (i: number) => void;
  canEdit: boolean;
  label: (z: Zone) => string;
  /** A data zone's source (its columns head the zone's drawing). */
  source: (z: Zone) => DataSource | undefined;
  thumb: (z: Zone) => { src: string; label: string } | null;
  onMove: (i: number, x: number, y: number) => void;
}) {
  const box = useRef<HTMLDivElement>(null);
  const drag = useRef<{ i: number; startX: number; startY: number; x: number; y: number; scale: number } | null>(null);
  const sorted = content.zones.map((z, i) => ({ z, i })).sort((a, b) => a.z.zIndex - b.z.zIndex);
  return (
    <div
      class="canvas"
      ref={box}
      style={{ aspectRatio: `${content.width} / ${content.height}`, background: content.background.color }}
      role="img"
      aria-label={`Canvas ${content.width} by ${content.height} with ${content.zones.length} zones`}
    >
      {sorted.map(({ z, i }) => (
        <div
          key={z.id ?? i}
          class={`zone${i === selected ? ' selected' : ''}`}
          data-zone={z.name}
          style={{
            left: `${(z.x / content.width) * 100}%`,
            top: `${(z.y / content.height) * 100}%`,
            width: `${(z.width / content.width) * 100}%`,
            height: `${(z.height / content.height) * 100}%`,
            zIndex: z.zIndex,
          }}
          onPointerDown={(e) => {
            onSelect(i);
            if (!canEdit || !box.current) return;
            (e.currentTarget as HTMLElement).setPointerCapture(e.pointerId);
            drag.current = { i, startX: e.clientX, startY: e.clientY, x: z.x, y: z.y, scale: content.width / box.current.clientWidth };
          }}
          onPointerMove={(e) => {
            const d = drag.current;
            if (!d) return;
            const x = Math.min(Math.max(0, Math.round(d.x + (e.clientX - d.startX) * d.scale)), content.width - z.width);
            const y = Math.min(Math.max(0, Math.round(d.y + (e.clientY - d.startY) * d.scale)), content.height - z.height);
            if (x !== z.x || y !== z.y) onMove(d.i, x, y);
          }}
          onPointerUp={() => (drag.current = null)}
        >
          {isData(z.content) && <ZoneDataPreview source={source(z)} view={z.content.view} />}
          {(() => {
            const th = thumb(z);
            return th ? <img class="zone-thumb" src={th.src} alt="" style={{ objectFit: z.fit === 'fill' ? 'fill' : z.fit }} /> : null;
          })()}
          <span class="zone-label">
            {z.name || `Zone ${i + 1}`} · {label(z)}
          </span>
        </div>
      ))}
    </div>
  );
}
