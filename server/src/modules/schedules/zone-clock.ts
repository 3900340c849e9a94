/** The zone clock moved to platform/time/zone-clock.ts (the screens module's noise roll-ups need it too). */
export { instantOf, offsetAt, wallClock } from '../../platform/time/zone-clock.js';
