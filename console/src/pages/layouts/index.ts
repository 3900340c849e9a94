/** The Layouts pages: the list and the editor (canvas, zone form, a data zone's view). docs/console.md, "Layouts". */
import './layouts.css';

export { LayoutDetailPage } from './detail';
export { LayoutsPage } from './list';
