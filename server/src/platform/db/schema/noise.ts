/** Noise history roll-ups (migrations 0440, 0450, 0480): sums over a screen's ten-second buckets. */

/** The sums of a roll-up row; the average level is level_ms / monitored_ms. */
export interface NoiseSums {
  bucket_count: number;
  monitored_ms: number;
  /** sum(average_level * monitored_ms) */
  level_ms: number;
  peak_level: number;
  warning_ms: number;
  loud_ms: number;
  trigger_count: number;
}

/** `noise_minutes` and `noise_hours`: one row per screen per UTC minute / hour. */
export interface NoiseRollupTable extends NoiseSums {
  /** The screen's number (`screens.num`). */
  screen_num: number;
  started_ms: number;
}

/** `noise_days`: one row per screen per local day of the zone the screen had when the buckets arrived. */
export interface NoiseDaysTable extends NoiseSums {
  screen_num: number;
  time_zone: string;
  /** YYYY-MM-DD, local */
  day: string;
  started_ms: number;
  ends_ms: number;
}
