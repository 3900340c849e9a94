/** The Plugins pages (issue 22): the catalog, each overlay plugin's instances and editor, noise reports. docs/console-plugins.md. */
import './plugins.css';

export { PluginInstancesPage, PluginsPage } from './catalog';
export { InstanceEditorPage } from './editor';
