/**
 * What other pages use of the Data pages: the view editor with its live preview, and how a
 * view is read back and checked (a layout's data zone keeps a view: pages/layouts/).
 */
import './data.css';

export type { DataSource, View } from './model';
export { ViewEditor } from './view-editor';
export { viewIssuesOf } from './view-state';
