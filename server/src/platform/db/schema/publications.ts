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

/** Campaigns (migration 0390, docs/campaigns.md). */
export interface CampaignsTable {
  id: string;
  name: string;
  description: string;
  /** JSON: the campaign draft (window, show, content, placements). */
  draft: string;
  revision: number;
  published_release_id: string | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

export interface CampaignReleasesTable {
  id: string;
  campaign_id: string;
  number: number;
  /** JSON: the draft released plus `published: [{type, id, publicationId, number}]`. */
  snapshot: string;
  note: string;
  source: string;
  published_by: string | null;
  published_at: string;
}
