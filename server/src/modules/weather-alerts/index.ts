import type { PlacardModule } from '../../platform/module.js';
import { weatherRoutes } from './weather.routes.js';
import { TICK_MS, tick } from './weather.service.js';

/**
 * Emergency weather alerts (issue 21, docs/weather-alerts.md): a monitor polls a CAP Atom or
 * NWS GeoJSON feed; rules map the alerts it reads to takeovers (the takeovers module, installed before this one).
 */
export const weatherAlertsModule: PlacardModule = {
  name: 'weather-alerts',
  routes: weatherRoutes,
  install({ deps }) {
    // Polls when due (state in weather_monitor, so a restart keeps the schedule), expiry and takeover reconciliation every tick.
    deps.periodic.every('weather-alerts.tick', TICK_MS, () => tick(deps));
  },
};
