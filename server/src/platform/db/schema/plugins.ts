/** Plugins: installations, instances and their targets (migration 0430). */

export interface PluginInstallationsTable {
  plugin_id: string;
  version: string;
  installed_at: string;
  installed_by: string | null;
  /** 1 when it was installed only because another plugin needs it. */
  as_dependency: number;
}

export interface PluginInstancesTable {
  id: string;
  plugin_id: string;
  name: string;
  /** JSON: the instance's config, valid for its plugin's schema. */
  config: string;
  revision: number;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

export interface PluginInstanceTargetsTable {
  instance_id: string;
  /** 'all' (target_id ''), 'screen', 'group' or 'location'. */
  target_type: string;
  target_id: string;
}
