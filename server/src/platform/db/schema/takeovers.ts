/** Takeovers and presentation overrides (migration 0400, docs/takeovers.md). */
export interface TakeoversTable {
  id: string;
  /** 'takeover' | 'override'. */
  kind: string;
  /** 'asset' | 'playlist' | 'layout' | 'widget', or null for a message. */
  content_type: string | null;
  content_id: string | null;
  message_text: string | null;
  message_severity: string | null;
  /** 'info' | 'warning' | 'emergency': ranks windows of one kind. */
  severity: string;
  /** 'force-on' | 'default'. */
  audio: string;
  /** JSON: the targets as sent ({all?, screenIds?, groupIds?, locationIds?}). */
  targets: string;
  starts_at: string;
  ends_at: string | null;
  reason: string;
  /** 'active' | 'ended' | 'cancelled' (overrides: 'stopped'); a passed ends_at ends it at read time. */
  state: string;
  ended_at: string | null;
  ended_by: string | null;
  end_reason: string | null;
  /** 1 once the end was pushed to screens and audited. */
  end_announced: number;
  origin_kind: string | null;
  origin_id: string | null;
  origin_rule_id: string | null;
  created_by: string | null;
  created_by_label: string;
  created_at: string;
}

export interface TakeoverTargetsTable {
  takeover_id: string;
  /** 'all' | 'screen' | 'group' | 'location' ('all' has target_id ''). */
  target_type: string;
  target_id: string;
}

export interface TakeoverEventsTable {
  id: string;
  takeover_id: string;
  /** 'started' | 'cancelled' | 'stopped' | 'ended'. */
  action: string;
  actor_user_id: string | null;
  actor_label: string;
  reason: string;
  at: string;
}
