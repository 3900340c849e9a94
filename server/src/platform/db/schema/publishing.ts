/** The publishing module (issue 20): submissions, their audit trail, notifications. */
export interface ContentSubmissionsTable {
  id: string;
  content_type: string;
  content_id: string;
  /** 'draft' | 'rollback'. */
  kind: string;
  /** 'pending' | 'changes_requested' | 'approved' | 'scheduled' | 'published' | 'cancelled' | 'stale'. */
  state: string;
  message: string;
  /** JSON: what publishing the submission publishes. */
  snapshot: string;
  /** The content's revision when submitted (a draft submission is stale once it moved). */
  draft_revision: number;
  submitted_by: string | null;
  decided_by: string | null;
  decided_at: string | null;
  comment: string | null;
  publish_at: string | null;
  publication_id: string | null;
  publication_number: number | null;
  created_at: string;
  updated_at: string;
}

export interface ContentSubmissionEventsTable {
  id: string;
  submission_id: string;
  at: string;
  by: string | null;
  action: string;
  comment: string | null;
}

export interface NotificationsTable {
  id: string;
  user_id: string | null;
  kind: string;
  title: string;
  body: string;
  submission_id: string | null;
  created_at: string;
  read_at: string | null;
}
