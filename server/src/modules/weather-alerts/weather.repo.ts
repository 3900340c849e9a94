import type { Db } from '../../platform/db/database.js';
import type { WeatherAlertActionsTable, WeatherAlertsTable, WeatherMonitorTable, WeatherRulesTable } from '../../platform/db/schema.js';
import type { OfferedZone } from './parse.js';
import type { TakeoverInput } from '../takeovers/index.js';

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
export const ruleTargets = (r: RuleRow) => parseJson<TakeoverInput['targets']>(r.targets, {});
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

type Insert<T> = { [K in keyof T]: T[K] };

export const updateMonitor = (db: Db, set: Partial<MonitorRow>) => db.updateTable('weather_monitor').set(set).where('id', '=', 1).execute();
export const insertMonitor = (
  db: Db,
  row: Pick<MonitorRow, 'id' | 'enabled' | 'feed_url' | 'format' | 'zones' | 'poll_interval_sec' | 'zones_seen' | 'consecutive_failures' | 'updated_at'> &
    Partial<MonitorRow>,
) => db.insertInto('weather_monitor').values(row).execute();

export const alertRow = (db: Db, id: string) => db.selectFrom('weather_alerts').selectAll().where('id', '=', id).executeTakeFirst();
export const alertByIdentifier = (db: Db, identifier: string) =>
  db.selectFrom('weather_alerts').select('id').where('identifier', '=', identifier).executeTakeFirst();
export const alertsByIdentifiers = (db: Db, identifiers: string[]) =>
  identifiers.length ? db.selectFrom('weather_alerts').selectAll().where('identifier', 'in', identifiers).execute() : Promise.resolve([] as AlertRow[]);
export const insertAlert = (db: Db, row: Insert<AlertRow>) => db.insertInto('weather_alerts').values(row).execute();
/** Changes an alert that is still active (answers whether it was). */
export async function endActiveAlert(db: Db, id: string, set: Partial<AlertRow>): Promise<boolean> {
  const r = await db.updateTable('weather_alerts').set(set).where('id', '=', id).where('state', '=', 'active').executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** Actions still open (on air or waiting for a person), with their alert's state. */
/**
 * The actions still open, with their alert's state and, when a person cancelled the action's
 * takeover (POST /takeovers/{id}/cancel: state 'cancelled'; the weather module itself ends its
 * takeovers as 'ended'), who, when and why.
 */
export const openActionRows = (db: Db) =>
  db
    .selectFrom('weather_alert_actions as x')
    .innerJoin('weather_alerts as a', 'a.id', 'x.alert_id')
    .leftJoin('takeovers as tk', (j) => j.onRef('tk.id', '=', 'x.takeover_id').on('tk.state', '=', 'cancelled'))
    .selectAll('x')
    .select([
      'a.state as alert_state',
      'tk.id as cancelled_takeover',
      'tk.ended_at as cancelled_at',
      'tk.ended_by as cancelled_by',
      'tk.end_reason as cancel_reason',
    ])
    .where('x.state', 'in', ['active', 'pending_confirmation'])
    .execute();
export const updateAction = (db: Db, id: string, set: Partial<ActionRow>) => db.updateTable('weather_alert_actions').set(set).where('id', '=', id).execute();
export const insertAction = (db: Db, row: Pick<ActionRow, 'id' | 'alert_id' | 'rule_id' | 'rule_name' | 'state' | 'created_at'> & Partial<ActionRow>) =>
  db.insertInto('weather_alert_actions').values(row).execute();
export const actionRuleIds = async (db: Db, alertId: string) =>
  new Set((await db.selectFrom('weather_alert_actions').select('rule_id').where('alert_id', '=', alertId).execute()).map((r) => r.rule_id));
export const actionOf = (db: Db, alertId: string, ruleId: string) =>
  db.selectFrom('weather_alert_actions').selectAll().where('alert_id', '=', alertId).where('rule_id', '=', ruleId).executeTakeFirst();
/** A confirmation given under `ruleId` to an alert that `alertId` superseded. */
export const carriedConfirmation = (db: Db, alertId: string, ruleId: string) =>
  db
    .selectFrom('weather_alert_actions as x')
    .innerJoin('weather_alerts as a', 'a.id', 'x.alert_id')
    .select(['x.confirmed_by', 'x.confirmed_at'])
    .where('a.superseded_by', '=', alertId)
    .where('x.rule_id', '=', ruleId)
    .where('x.confirmed_at', 'is not', null)
    .executeTakeFirst();

/**
 * Whether the alert that `alertId` superseded was held off the air under `ruleId` by a person:
 * its takeover was cancelled, or it waited for a person and never went on air (superseded
 * before a decision, or dismissed). An update of such an alert waits for a person again.
 */
export const carriedHold = async (db: Db, alertId: string, ruleId: string) =>
  (await db
    .selectFrom('weather_alert_actions as x')
    .innerJoin('weather_alerts as a', 'a.id', 'x.alert_id')
    .leftJoin('takeovers as tk', 'tk.id', 'x.takeover_id')
    .select('x.id')
    .where('a.superseded_by', '=', alertId)
    .where('x.rule_id', '=', ruleId)
    .where((eb) => eb.or([eb('tk.state', '=', 'cancelled'), eb.and([eb('x.takeover_id', 'is', null), eb('x.state', 'in', ['ended', 'dismissed'])])]))
    .executeTakeFirst()) !== undefined;

export const insertRule = (db: Db, row: Insert<RuleRow>) => db.insertInto('weather_rules').values(row).execute();
export const updateRule = (db: Db, id: string, set: Partial<RuleRow>) => db.updateTable('weather_rules').set(set).where('id', '=', id).execute();
export async function deleteRule(db: Db, id: string): Promise<boolean> {
  const r = await db.deleteFrom('weather_rules').where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

export const userLabel = async (db: Db, id: string) => {
  const u = await db.selectFrom('users').select(['display_name', 'email']).where('id', '=', id).executeTakeFirst();
  return u?.display_name || u?.email || 'a user';
};
