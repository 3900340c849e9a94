import { api, type Page } from '../../api';
import type { Asset, Group, Location, Screen } from '../../types';
import type { Targets } from '../../ui/targets';
import { wallClock } from '../schedule-rules';
// The configs' shapes as the player reads them (type-only: nothing of the player enters the console bundle).
import type { BrandBugConfig, Corner, NoiseMeterConfig } from '../../player/overlay-config';

/**
 * Plugins as the console reads them (docs/console-plugins.md): the catalog, instances and their
 * configs (the shapes of docs/plugins.md / the plugin contract), and what the pages pick from.
 */

export type PluginId = 'countdown-bar' | 'brand-bug' | 'noise-meter' | 'overlay-core';
/** The plugins that have instances (overlay-core is the layer they draw in: no instances, no config). */
export const INSTANCE_PLUGINS = ['countdown-bar', 'brand-bug', 'noise-meter'] as const;
export type InstancePluginId = (typeof INSTANCE_PLUGINS)[number];
export const isInstancePlugin = (id: string): id is InstancePluginId => (INSTANCE_PLUGINS as readonly string[]).includes(id);

export interface CatalogEntry {
  id: string;
  name: string;
  version: string;
  description: string;
  requires: string[];
  configSchema?: unknown;
  playerFamilies: string[];
  installed: boolean;
  installedAt: string | null;
  asDependency: boolean;
  instanceCount: number;
}

export type { BrandBugConfig, Corner, NoiseMeterConfig };
export const CORNERS: { value: Corner; label: string }[] = [
  { value: 'top-left', label: 'Top left' },
  { value: 'top-right', label: 'Top right' },
  { value: 'bottom-left', label: 'Bottom left' },
  { value: 'bottom-right', label: 'Bottom right' },
];

export interface CountdownConfig {
  target: { type: 'at'; at: string } | { type: 'daily'; time: string; weekdays?: number[] };
  label: string;
  windowMin: number;
  position: 'top' | 'bottom';
  heightPct: number;
  colors: { bar: string; background: string; text: string };
  afterZero: { show: 'hide' | 'message' | 'count-up'; text: string; forMin: number };
}

export interface ConfigOf {
  'countdown-bar': CountdownConfig;
  'brand-bug': BrandBugConfig;
  'noise-meter': NoiseMeterConfig;
}

export interface Instance<P extends InstancePluginId = InstancePluginId> {
  id: string;
  pluginId: P;
  name: string;
  targets: Targets;
  config: ConfigOf[P];
  revision: number;
  createdAt: string;
  updatedAt: string;
}

/** A new instance's config: the server's defaults (a brand bug still needs its logo). */
export function defaultConfig<P extends InstancePluginId>(plugin: P): ConfigOf[P] {
  const configs: ConfigOf = {
    'countdown-bar': {
      target: { type: 'daily', time: '12:00' },
      label: '',
      windowMin: 60,
      position: 'bottom',
      heightPct: 6,
      colors: { bar: '#e4572e', background: '#00000099', text: '#ffffff' },
      afterZero: { show: 'hide', text: 'Time!', forMin: 5 },
    },
    'brand-bug': { assetId: '', corner: 'top-right', sizePct: 12, marginPct: 2, opacity: 0.85, hideDuringFullScreenVideo: false },
    'noise-meter': {
      warningLevel: 60,
      loudLevel: 75,
      display: 'bar',
      corner: 'bottom-right',
      sizePct: 18,
      loudMessage: 'Too loud! Please lower your voices.',
      calibrationOffset: 0,
      microphone: { deviceLabel: '', echoCancellation: false, noiseSuppression: false, autoGainControl: false },
    },
  };
  return structuredClone(configs[plugin]);
}

/** What the instance pages pick from: screens (with their last reported display), groups, locations, images. */
export interface Choices {
  screens: Screen[];
  groups: Group[];
  locations: Location[];
  images: Asset[];
}

export async function loadChoices(withImages: boolean): Promise<Choices> {
  const [screens, groups, locations, images] = await Promise.all([
    api.get<Page<Screen>>('screens?limit=500'),
    api.get<Page<Group>>('screen-groups?limit=500'),
    api.get<Page<Location>>('locations?limit=500'),
    withImages ? api.get<Page<Asset>>('assets?kind=image&limit=500') : Promise.resolve({ items: [] as Asset[], nextCursor: null }),
  ]);
  return { screens: screens.items, groups: groups.items, locations: locations.items, images: images.items.filter((a) => a.kind === 'image') };
}

export const instancesPath = (plugin: string) => `plugins/${plugin}/instances`;
export const ifMatch = (i: { revision: number }) => ({ headers: { 'if-match': `"${i.revision}"` } });

/** A screen's last reported display size (its heartbeat's `display`), else null. */
export function displayOf(screen: Screen): { width: number; height: number } | null {
  const d = (screen.lastStatus as { display?: { width?: unknown; height?: unknown } } | null)?.display;
  const w = Number(d?.width);
  const h = Number(d?.height);
  return Number.isFinite(w) && Number.isFinite(h) && w > 0 && h > 0 ? { width: Math.round(w), height: Math.round(h) } : null;
}

export function describeTargets(t: Targets, c: Choices | undefined): string {
  if (t.all) return 'Every screen';
  const names = (ids: string[] | undefined, pool: { id: string; name: string }[] | undefined, prefix: string) =>
    (ids ?? []).map((id) => `${prefix}${pool?.find((i) => i.id === id)?.name ?? id.slice(0, 8)}`);
  const parts = [...names(t.screenIds, c?.screens, ''), ...names(t.groupIds, c?.groups, 'Group '), ...names(t.locationIds, c?.locations, 'Location ')];
  return parts.join(', ') || 'No screen yet';
}

const WEEKDAY = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
export const WEEKDAYS = WEEKDAY.map((label, i) => ({ value: i + 1, label }));

/** One line on what an instance shows, for the list. */
export function describeConfig(plugin: InstancePluginId, config: ConfigOf[InstancePluginId], c: Choices | undefined): string {
  if (plugin === 'countdown-bar') {
    const x = config as CountdownConfig;
    const when =
      x.target.type === 'at'
        ? `to ${new Date(x.target.at).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })}`
        : `to ${x.target.time} ${x.target.weekdays?.length ? `on ${x.target.weekdays.map((d) => WEEKDAY[d - 1]).join(', ')}` : 'every day'} (screen time)`;
    return `${x.label ? `“${x.label}” ` : ''}${when}, the last ${x.windowMin} min, ${x.position}`;
  }
  if (plugin === 'brand-bug') {
    const x = config as BrandBugConfig;
    const logo = c?.images.find((a) => a.id === x.assetId)?.name ?? 'a logo';
    return `${logo}, ${CORNERS.find((k) => k.value === x.corner)?.label.toLowerCase()}, ${x.sizePct}% wide`;
  }
  const x = config as NoiseMeterConfig;
  return `${x.display === 'hidden' ? 'Measures only (nothing shown)' : `${x.display.replace('-', ' ')}`}, warning at ${x.warningLevel}, loud at ${x.loudLevel}`;
}

/** `YYYY-MM-DDTHH:MM` in this browser's zone (a datetime-local input's value) for an ISO time, and back. */
export const toLocalInput = (iso: string) => (iso ? wallClock(iso, Intl.DateTimeFormat().resolvedOptions().timeZone) : '');
export function fromLocalInput(value: string): string {
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? '' : d.toISOString();
}
