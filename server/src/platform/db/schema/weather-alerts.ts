/** Emergency weather alerts (migration 0420, docs/weather-alerts.md). */
export interface WeatherMonitorTable {
  /** Always 1: there is one monitor. */
  id: number;
  enabled: number;
  feed_url: string;
  /** 'cap-atom' | 'nws-geojson'. */
  format: string;
  /** JSON: the zone codes watched ([] = every alert in the feed). */
  zones: string;
  poll_interval_sec: number;
  etag: string | null;
  last_modified: string | null;
  body_sha256: string | null;
  /** JSON: [{code, kind, areaDesc}] the last document offered. */
  zones_seen: string;
  consecutive_failures: number;
  last_poll_at: string | null;
  last_success_at: string | null;
  last_error: string | null;
  last_error_code: string | null;
  next_poll_at: string | null;
  updated_at: string;
}

export interface WeatherAlertsTable {
  id: string;
  /** The CAP identifier (NWS: properties.id); unique. */
  identifier: string;
  sender: string;
  sender_name: string;
  /** 'Alert' | 'Update' | 'Cancel' (CAP msgType). */
  msg_type: string;
  event: string;
  severity: string;
  urgency: string;
  certainty: string;
  headline: string;
  description: string;
  instruction: string;
  sent: string | null;
  effective: string | null;
  expires: string | null;
  ends: string | null;
  area_desc: string;
  /** JSON: the zone codes (UGC, SAME, CAP geocode values). */
  zones: string;
  /** JSON: the identifiers it references. */
  refs: string;
  /** 'active' | 'expired' | 'cancelled' | 'superseded' | 'cancel' (a Cancel message itself). */
  state: string;
  superseded_by: string | null;
  first_seen_at: string;
  updated_at: string;
  ended_at: string | null;
}

export interface WeatherRulesTable {
  id: string;
  name: string;
  /** JSON: {events?, severities?, urgencies?, certainties?, zones?}. */
  match: string;
  /** JSON: {all?, screenIds?, groupIds?, locationIds?}. */
  targets: string;
  require_confirmation: number;
  created_at: string;
  updated_at: string;
}

export interface WeatherAlertActionsTable {
  id: string;
  alert_id: string;
  rule_id: string;
  rule_name: string;
  /** 'pending_confirmation' | 'active' | 'ended' | 'dismissed' | 'failed'. */
  state: string;
  takeover_id: string | null;
  confirmed_by: string | null;
  confirmed_at: string | null;
  started_at: string | null;
  ended_at: string | null;
  end_reason: string | null;
  error: string | null;
  created_at: string;
}
