/**
 * Showing things in a notebook: through tslab's display when the code runs in the tslab kernel or
 * the headless notebook runner, else as plain text on stdout.
 */
import { tableToHtml, tableToMarkdown, tableToText, type SimpleTable, type TableFormat } from '../util/table.js';
import { tslabModule } from './tslab.js';

export { runningUnderTslab } from './tslab.js';


/**
 * Shows `t`: under tslab as HTML (or markdown with `format: 'markdown'`), else as plain text on
 * stdout, so the same notebook code reads well in Jupyter, in the runner's .ipynb and in a terminal.
 */
export function showTable(t: SimpleTable, opts: TableFormat & { format?: 'html' | 'markdown' } = {}): void {
  const display = tslabModule()?.display;
  if (!display) {
    console.log(tableToText(t, opts));
  } else if (opts.format === 'markdown') {
    display.markdown(tableToMarkdown(t, opts));
  } else {
    display.html(tableToHtml(t, opts));
  }
}
