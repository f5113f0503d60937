// Text that may come from outside (a receiver's answer, a CSV cell, a contact's name) made safe for an
// operator's terminal: control characters and the Unicode direction overrides are printed as visible
// escapes (`\x1b`, `\u202e`) instead of moving the cursor, retitling the window or reordering the line.

/** C0 controls except tab and newline, DEL, C1 controls, and the bidirectional marks and overrides. */
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
/** The same, plus tab and newline: for one table cell or one line. */
const CONTROLS_AND_LAYOUT = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

function escapeOf(character: string): string {
  const code = character.codePointAt(0)!;
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** `text` with every control character shown as an escape; newlines and tabs too unless `multiline`. */
export function printable(text: string, { multiline = false }: { multiline?: boolean } = {}): string {
  return text.replace(multiline ? CONTROLS : CONTROLS_AND_LAYOUT, escapeOf);
}
