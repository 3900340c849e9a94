/** The publication workflow (issue 20): publications of playlists, schedules, widgets, campaigns. */
export interface ContentPublicationsTable {
  id: string;
  content_type: string;
  content_id: string;
  /** 1, 2, 3... per (content_type, content_id). */
  number: number;
  /** JSON snapshot of what screens play, immutable. */
  snapshot: string;
  note: string;
  /** 'edit' | 'submission' | 'rollback' | 'campaign' | 'migration'. */
  source: string;
  published_by: string | null;
  published_at: string;
}
