/** Content: playlists, layouts, schedules, assignments, manifest dependencies. */

/** Content (issue 6): playlists, layouts, schedules, assignments, manifest dependencies. */
export interface PlaylistsTable {
  id: string;
  name: string;
  description: string;
  /** Bumped on every change of the playlist or its items: If-Match compares it. */
  revision: number;
  /** JSON TagRule or null. */
  tag_rule: string | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
  /** The content_publications row screens play (issue 20); null: never published, plays nothing. */
  published_publication_id: string | null;
}

export interface PlaylistItemsTable {
  id: string;
  playlist_id: string;
  position: number;
  asset_id: string | null;
  widget_id: string | null;
  child_playlist_id: string | null;
  duration_ms: number | null;
  transition_type: string;
  transition_ms: number;
  valid_from: string | null;
  valid_until: string | null;
  /** JSON array of {days, from, to}. */
  dayparts: string;
  enabled: number;
  created_at: string;
  updated_at: string;
}

export interface LayoutsTable {
  id: string;
  name: string;
  description: string;
  revision: number;
  /** JSON LayoutContent being edited. */
  draft: string;
  published_revision_id: string | null;
  published_at: string | null;
  preview_sha256: string | null;
  preview_content_type: string | null;
  preview_updated_at: string | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

export interface LayoutRevisionsTable {
  id: string;
  layout_id: string;
  number: number;
  /** JSON LayoutContent, immutable. */
  content: string;
  note: string;
  created_by: string | null;
  created_at: string;
  /** Why it was published: 'edit' | 'submission' | 'rollback' | 'campaign' | 'migration'. */
  source: string;
}

export interface SchedulesTable {
  id: string;
  name: string;
  content_type: 'playlist' | 'layout' | 'campaign';
  playlist_id: string | null;
  layout_id: string | null;
  campaign_id: string | null;
  starts_at: string;
  ends_at: string | null;
  rrule: string | null;
  time_zone: string;
  follow_screen_zone: number;
  priority: number;
  enabled: number;
  /** Bumped by every change; `If-Match` names it (412 when stale). */
  revision: number;
  created_by: string | null;
  created_at: string;
  updated_at: string;
  /** 1: made by a campaign release (replaced by the next one); migration 0390. */
  campaign_owned?: number;
  /** JSON ScheduleSnapshot: unpublished changes (approvals on); null when there are none. */
  draft: string | null;
  /** When the row (what screens play) was last published; null: never published, nothing plays it. */
  published_at: string | null;
}

export interface ScheduleTargetsTable {
  schedule_id: string;
  target_type: 'screen' | 'group' | 'location';
  target_id: string;
}

export interface PlaylistAssignmentsTable {
  target_type: 'screen' | 'group';
  target_id: string;
  playlist_id: string;
  updated_by: string | null;
  updated_at: string;
}

/** A set of manifest dependencies, stored once for every screen whose last build used exactly it (migration 0490). */
export interface ManifestDepSetsTable {
  set_id: string;
  kind: string;
  ref_id: string;
}

/** The dependency set of each screen's last manifest build (its own assignment is implied). */
export interface ManifestScreenDepsTable {
  screen_id: string;
  set_id: string;
}
