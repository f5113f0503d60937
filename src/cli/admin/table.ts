// Lists for people: rows laid out in columns under a header.

/** The rows in columns as wide as their widest cell, under `header`; `empty` when there are no rows. */
export function table(header: string[], rows: string[][], empty: string): string {
  if (rows.length === 0) return empty;
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
