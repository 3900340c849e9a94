import type { LayoutSummary } from '../../types';
import type { View } from '../data/shared';

/** The layout editor's shapes (docs/content.md, "Layouts"). */

export type ZoneContent =
  | { type: 'playlist'; playlistId: string }
  | { type: 'asset'; assetId: string; durationMs: number | null }
  | { type: 'data'; sourceId: string; view: View | null }
  | { type: string; [k: string]: unknown };

export interface Zone {
  id?: string;
  name: string;
  x: number;
  y: number;
  width: number;
  height: number;
  zIndex: number;
  fit: 'contain' | 'cover' | 'fill';
  muted: boolean;
  content: ZoneContent | null;
}
export interface Content {
  width: number;
  height: number;
  background: { color: string; assetId: string | null };
  zones: Zone[];
}
export interface Layout extends LayoutSummary {
  draft: Content;
  published: Content | null;
}
export interface Revision {
  id: string;
  number: number;
  note: string;
  createdAt: string;
  current: boolean;
}

export type DataContent = { type: 'data'; sourceId: string; view: View | null };
export const isData = (c: ZoneContent | null | undefined): c is DataContent => c?.type === 'data';

export const RESOLUTIONS = [
  { label: '1920 × 1080 (landscape)', w: 1920, h: 1080 },
  { label: '1080 × 1920 (portrait)', w: 1080, h: 1920 },
  { label: '3840 × 2160 (4K)', w: 3840, h: 2160 },
  { label: '1280 × 720', w: 1280, h: 720 },
];
