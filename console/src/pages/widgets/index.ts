/** The Widgets pages (issue 19): the list, a new widget, one widget's editor. docs/console.md, "Widgets". */
import './widgets.css';

export { NewWidgetPage, WidgetPage } from './detail';
export { WidgetsPage } from './list';
export { AddWidgetItem, useWidgets } from './pickers';
