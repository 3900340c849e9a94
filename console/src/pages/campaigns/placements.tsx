import { useState } from 'preact/hooks';
import { DAY_LABEL, DAYS, describeRrule, type Repeat, repeatOf, zoneWords } from '../schedule-rules';
import { TargetPicker } from '../../ui/targets';
import { browserZone, type Lists, type Placement } from './model';

/** A placement's rule from the repeat choice (the same choices as the schedule form). */
function ruleOf(repeat: Repeat, days: string[], custom: string): string | null {
  if (repeat === 'daily') return 'FREQ=DAILY';
  if (repeat === 'weekdays') return 'FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR';
  if (repeat === 'weekly') return days.length ? `FREQ=WEEKLY;BYDAY=${DAYS.filter((d) => days.includes(d)).join(',')}` : null;
  if (repeat === 'monthly') return 'FREQ=MONTHLY';
  if (repeat === 'custom') return custom.trim() || null;
  return null;
}

/**
 * One placement: where (screens, groups, locations, picked like a schedule's targets),
 * its priority, how it repeats within the window, and the zone its times are read in.
 */
export function PlacementEditor({
  index,
  placement,
  lists,
  disabled,
  onChange,
  onRemove,
}: {
  index: number;
  placement: Placement;
  lists: Lists;
  disabled: boolean;
  onChange: (p: Placement) => void;
  onRemove: () => void;
}) {
  const initial = repeatOf(placement.rrule ?? null);
  const [repeat, setRepeat] = useState<Repeat>(initial.repeat);
  const [days, setDays] = useState<string[]>(initial.days);
  const [custom, setCustom] = useState(initial.custom);
  const setRule = (r: Repeat, d: string[], c: string) => {
    setRepeat(r);
    setDays(d);
    setCustom(c);
    onChange({ ...placement, rrule: ruleOf(r, d, c) });
  };
  const zones = [...new Set([...lists.locations.map((l) => l.timeZone), browserZone(), 'UTC', ...(placement.timeZone ? [placement.timeZone] : [])])];
  const legend = `Placement ${index + 1}`;
  return (
    <article class="placement">
      <fieldset data-placement={index + 1} disabled={disabled}>
        <legend>
          {legend}
          {placement.name ? ` (${placement.name})` : ''}
        </legend>
        <div class="grid">
          <label>
            Placement name
            <input
              value={placement.name ?? ''}
              maxLength={200}
              placeholder="optional"
              onInput={(e) => onChange({ ...placement, name: e.currentTarget.value })}
            />
          </label>
          <label>
            Priority
            <input
              type="number"
              min={-1000}
              max={1000}
              value={String(placement.priority)}
              onInput={(e) => onChange({ ...placement, priority: Math.trunc(Number(e.currentTarget.value) || 0) })}
            />
          </label>
        </div>
        <TargetPicker legend="Where" listClass="checks" lists={lists} value={placement.targets} onChange={(targets) => onChange({ ...placement, targets })} />
        <div class="grid">
          <label>
            Repeats within the window
            <select value={repeat} onChange={(e) => setRule(e.currentTarget.value as Repeat, days, custom)}>
              <option value="none">Does not repeat (the whole window)</option>
              <option value="daily">Every day (the window’s first day’s hours)</option>
              <option value="weekdays">Every weekday</option>
              <option value="weekly">Weekly on…</option>
              <option value="monthly">Every month</option>
              <option value="custom">Custom rule (advanced)</option>
            </select>
            {placement.rrule && <small>Repeats {describeRrule(placement.rrule)}.</small>}
          </label>
          <label>
            Time zone
            <select value={placement.timeZone ?? ''} onChange={(e) => onChange({ ...placement, timeZone: e.currentTarget.value || null })}>
              <option value="">Each screen’s own</option>
              {zones.map((z) => (
                <option key={z} value={z}>
                  {zoneWords(z)}
                </option>
              ))}
            </select>
          </label>
        </div>
        {repeat === 'weekly' && (
          <fieldset>
            <legend>On</legend>
            <div class="checks">
              {DAYS.map((d) => (
                <label key={d}>
                  <input
                    type="checkbox"
                    checked={days.includes(d)}
                    onChange={(e) => setRule('weekly', e.currentTarget.checked ? [...days, d] : days.filter((x) => x !== d), custom)}
                  />{' '}
                  {DAY_LABEL[d]}
                </label>
              ))}
            </div>
            {days.length === 0 && <small>Tick at least one day, or it plays through the whole window.</small>}
          </fieldset>
        )}
        {repeat === 'custom' && (
          <label>
            Repeat rule (iCalendar RRULE, for experts)
            <input value={custom} maxLength={1000} placeholder="FREQ=WEEKLY;BYDAY=SA,SU" onInput={(e) => setRule('custom', days, e.currentTarget.value)} />
          </label>
        )}
        <button type="button" class="secondary outline small" onClick={onRemove}>
          Remove {legend.toLowerCase()}
        </button>
      </fieldset>
    </article>
  );
}
