/** Resource shapes the console reads (DESIGN.md section 11; fields added by modules are optional here). */
export interface Variant {
  id: string;
  purpose: 'player' | 'thumbnail' | 'poster' | 'preview' | string;
  contentType: string;
  width: number | null;
  height: number | null;
  sizeBytes: number;
  sha256: string;
}
export interface Asset {
  id: string;
  kind: 'image' | 'video' | 'audio' | 'pdf' | 'website' | 'widget';
  state: 'uploading' | 'processing' | 'ready' | 'failed' | 'archived';
  name: string;
  sizeBytes: number | null;
  contentType: string | null;
  width: number | null;
  height: number | null;
  durationMs: number | null;
  folderId: string | null;
  tags: string[];
  failureReason: string | null;
  progress: number | null;
  website?: { url: string } | null;
  createdAt: string;
  updatedAt: string;
  archivedAt?: string | null;
  variants: Variant[];
}
export interface Folder {
  id: string;
  name: string;
  parentId: string | null;
  path: string[];
  assetCount: number;
}
export interface Tag {
  id: string;
  name: string;
  color: string | null;
  assetCount: number;
}

export function formatBytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return '—';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v < 10 && i > 0 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}

export function formatDuration(ms: number | null | undefined): string {
  if (!ms && ms !== 0) return '—';
  const s = Math.round(ms / 1000);
  const m = Math.floor(s / 60);
  return m ? `${m}:${String(s % 60).padStart(2, '0')}` : `${s} s`;
}
