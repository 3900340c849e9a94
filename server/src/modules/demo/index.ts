import type { PlacardModule } from '../../platform/module.js';
import { demoRoutes } from './demo.routes.js';
import { installDemo } from './demo.service.js';

/** Demo mode (PLACARD_DEMO): sample content seeded once, and its reset. */
export const demoModule: PlacardModule = {
  name: 'demo',
  routes: demoRoutes,
  install({ deps }) {
    installDemo(deps);
  },
};
