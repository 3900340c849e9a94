/** The noise history answers the report reads (the noise-reports module's routes; docs/noise-reports.md). */

export interface Figures {
  monitoredMs: number;
  averageLevel: number | null;
  peakLevel: number | null;
  warningMs: number;
  loudMs: number;
  triggerCount: number;
  coverage: number | null;
}

export interface Summary extends Figures {
  loudestPeriods?: { startsAt: string; endsAt?: string; averageLevel: number | null; peakLevel: number | null }[];
}

export interface SeriesAnswer {
  resolution: string;
  points: {
    startsAt: string;
    averageLevel: number | null;
    peakLevel: number | null;
    monitoredMs: number;
    warningMs: number;
    loudMs: number;
    triggerCount: number;
  }[];
}

export interface DailyRow extends Figures {
  date: string;
  /** The busiest hour's start, ISO in the report's zone (its wall-clock time is in the text). */
  busiestHour: string | null;
  hours: number;
}

export interface ScreenRow extends Figures {
  screenId: string;
  name: string;
}
