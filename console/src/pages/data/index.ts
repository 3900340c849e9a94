/** The Data pages (issue 17): the list, adding a source, one source. docs/console.md, "Data". */
import './data.css';

export { NewDataSourcePage } from './add';
export { DataSourcePage } from './detail';
export { DataSourcesPage } from './list';
