import { MODULES } from './modules/index.js';
import type { Route } from './platform/http/route.js';

/** Every route of the server, module by module (modules/index.ts). */
export const ROUTES: readonly Route[] = MODULES.flatMap((m) => m.routes);
