import type { Group, Location, Screen } from '../types';

/** Where something plays: every screen, or screens, groups and locations (takeovers, alert rules, placements). */
export interface Targets {
  all?: boolean;
  screenIds?: string[];
  groupIds?: string[];
  locationIds?: string[];
}

type Key = 'screenIds' | 'groupIds' | 'locationIds';

/**
 * Ticks screens, groups and locations; with `allowAll`, an "Every screen" box first that
 * hides the rest while ticked.
 */
export function TargetPicker<T extends Targets>({
  lists,
  value,
  onChange,
  legend,
  allowAll = false,
  listClass = 'target-picks',
}: {
  lists: { screens: Pick<Screen, 'id' | 'name'>[]; groups: Pick<Group, 'id' | 'name'>[]; locations: Pick<Location, 'id' | 'name'>[] };
  value: T;
  onChange: (t: T) => void;
  legend: string;
  allowAll?: boolean;
  listClass?: string;
}) {
  const toggle = (key: Key, id: string, on: boolean) => {
    const now = value[key] ?? [];
    onChange({ ...value, [key]: on ? [...now, id] : now.filter((x) => x !== id) });
  };
  const tick = (key: Key, id: string, text: string) => (
    <label key={`${key}:${id}`}>
      <input type="checkbox" checked={(value[key] ?? []).includes(id)} onChange={(e) => toggle(key, id, e.currentTarget.checked)} /> {text}
    </label>
  );
  return (
    <fieldset>
      <legend>{legend}</legend>
      {allowAll && (
        <label>
          <input type="checkbox" checked={!!value.all} onChange={(e) => onChange({ ...value, all: e.currentTarget.checked })} /> <strong>Every screen</strong>
        </label>
      )}
      {!(allowAll && value.all) && (
        <div class={listClass}>
          {lists.screens.map((s) => tick('screenIds', s.id, s.name))}
          {lists.groups.map((g) => tick('groupIds', g.id, `Group ${g.name}`))}
          {lists.locations.map((l) => tick('locationIds', l.id, `Location ${l.name}`))}
          {lists.screens.length + lists.groups.length + lists.locations.length === 0 && <small class="muted">Add screens first.</small>}
        </div>
      )}
    </fieldset>
  );
}
