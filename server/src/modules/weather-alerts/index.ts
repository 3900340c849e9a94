import type { PlacardModule } from '../../platform/module.js';
import { endTakeover, startTakeover } from '../takeovers/index.js';
import { useTakeoverPort } from './takeover-port.js';
import { weatherRoutes } from './weather.routes.js';
import { TICK_MS, tick } from './weather.service.js';

/**
 * Emergency weather alerts (issue 21, docs/weather-alerts.md): a monitor polls a CAP Atom or
 * NWS GeoJSON feed; rules map the alerts it reads to takeovers (through takeover-port.ts).
 */
export const weatherAlertsModule: PlacardModule = {
  name: 'weather-alerts',
  routes: weatherRoutes,
  install({ deps }) {
    // Alerts go on air as takeovers (the takeovers module, installed before this one).
    useTakeoverPort(deps, {
      start: (input, actor, origin) => startTakeover(deps, { ...input, audio: 'default' }, actor, origin),
      end: async (id, reason) => {
        await endTakeover(deps, id, { by: { userId: null, label: 'Weather alerts' }, reason, state: 'ended' });
      },
    });
    // Polls when due (state in weather_monitor, so a restart keeps the schedule), expiry and takeover reconciliation every tick.
    deps.periodic.every('weather-alerts.tick', TICK_MS, () => tick(deps));
  },
};

export { type TakeoverPort, type TakeoverStart, type TakeoverActor, type TakeoverOrigin, useTakeoverPort } from './takeover-port.js';
