import type { Db } from '../../platform/db/database.js';
import type { WeatherAlertActionsTable, WeatherAlertsTable, WeatherMonitorTable, WeatherRulesTable } from '../../platform/db/schema.js';
import type { OfferedZone } from './parse.js';
import type { TakeoverTargets } from './takeover-port.js';

export type MonitorRow = WeatherMonitorTable;
export type AlertRow = WeatherAlertsTable;
export type RuleRow = WeatherRulesTable;
export type ActionRow = WeatherAlertActionsTable;

export interface RuleMatch {
  events?: string[];
  severities?: string[];
  urgencies?: string[];
  certainties?: string[];
  zones?: string[];
}

export const parseJson = <T>(s: string | null, fallback: T): T => {
  if (!s) return fallback;
  try {
    return JSON.parse(s) as T;
  } catch {
    return fallback;
  }
};

export const monitorRow = (db: Db) => db.selectFrom('weather_monitor').selectAll().where('id', '=', 1).executeTakeFirst();
export const ruleRows = (db: Db) => db.selectFrom('weather_rules').selectAll().orderBy('name').orderBy('id').execute();
export const ruleRow = (db: Db, id: string) => db.selectFrom('weather_rules').selectAll().where('id', '=', id).executeTakeFirst();
export const activeAlertRows = (db: Db) =>
  db.selectFrom('weather_alerts').selectAll().where('state', '=', 'active').orderBy('first_seen_at').orderBy('id').execute();

export function zonesSeen(row: MonitorRow | undefined): OfferedZone[] {
  return parseJson<OfferedZone[]>(row?.zones_seen ?? null, []);
}

export const ruleMatch = (r: RuleRow) => parseJson<RuleMatch>(r.match, {});
export const ruleTargets = (r: RuleRow) => parseJson<TakeoverTargets>(r.targets, {});
export const alertZones = (a: AlertRow) => parseJson<string[]>(a.zones, []);

/** Alerts to show: every active one and those seen since `since`, newest first, at most `limit`. */
export async function recentAlertRows(db: Db, since: string, limit: number) {
  return db
    .selectFrom('weather_alerts')
    .selectAll()
    .where((eb) => eb.or([eb('state', '=', 'active'), eb('first_seen_at', '>=', since), eb('ended_at', '>=', since)]))
    .orderBy('first_seen_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

export async function actionRowsOf(db: Db, alertIds: string[]) {
  if (alertIds.length === 0) return [];
  return db.selectFrom('weather_alert_actions').selectAll().where('alert_id', 'in', alertIds).orderBy('created_at').orderBy('id').execute();
}
