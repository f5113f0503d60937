// Lists for people: rows laid out in columns under a header.
import { printable } from '../terminal-text.js';

/**
 * The rows in columns as wide as their widest cell, under `header`; `empty` when there are no rows. A
 * cell's control characters and line breaks are shown as escapes, so every row stays one line.
 */
export function table(header: string[], cells: string[][], empty: string): string {
  if (cells.length === 0) return empty;
  const rows = cells.map((row) => row.map((cell) => printable(cell)));
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  return [header, ...rows]
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
