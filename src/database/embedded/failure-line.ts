// Picks, from what initdb or postgres printed, the one line that says why it failed.

const SEVERE = /\b(?:FATAL|PANIC|ERROR):\s+(.*)$|\berror:\s+(.*)$/;

/** The reason in `output`: a failed bind first (it names the port), else the first error line, else the last line. */
export function failureLine(output: string): string {
  const lines = output
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const bind = lines.find((line) => line.includes('could not bind'));
  if (bind) return bind.replace(/^.*?LOG:\s+/, '');
  for (const line of lines) {
    const match = SEVERE.exec(line);
    if (match) return (match[1] ?? match[2])!;
  }
  return lines.at(-1) ?? 'no output';
}
