import type { PlacardModule } from '../../platform/module.js';
import { relaySettingsChanges } from './settings.js';
import { registerSystemExportSections } from './export.js';
import { identityRoutes } from './identity.routes.js';
import { registerSystemActions } from './maintenance.js';
import { openApiRoutes } from './openapi.routes.js';
import { registerSystemStatus } from './status.js';
import { installSystem, systemRoutes } from './system.routes.js';

/**
 * Settings, status, maintenance (backups, restore, vacuum), the settings export and the
 * OpenAPI document. Other modules contribute status sections, maintenance actions, restore
 * participants and export sections through the hooks re-exported here.
 */
export const systemModule: PlacardModule = {
  name: 'system',
  routes: [...openApiRoutes, ...identityRoutes, ...systemRoutes],
  install({ deps }) {
    registerSystemStatus(deps);
    relaySettingsChanges(deps);
    registerSystemActions(deps);
    registerSystemExportSections(deps);
    installSystem(deps);
  },
};

// The module's service, for the modules above it.
export { restoreGate } from './restore-gate.js';
export {
  registerExportSection,
  registerMaintenanceAction,
  registerRestoreParticipant,
  registerStatusContributor,
  type ExportSection,
  type ImportPlan,
  type MaintenanceAction,
  type RestoreParticipant,
  type StatusContributor,
} from './hooks.js';
export { invalidAt, parseSection, plan, stableJson } from './export.js';
export {
  approvalsRequired,
  cachedSettings,
  effectivePublicUrl,
  getSettings,
  onSettingsChanged,
  setMirroringReceiver,
  TimeZoneName,
  type MirroringReceiver,
  type Settings,
} from './settings.js';
