// The contacts feature's limits, named in one place.

/** Rows a CSV import writes per transaction. */
export const IMPORT_BATCH_SIZE = 1000;
/** The longest line (and CSV record) a contact file may have, in bytes: a row is far shorter, so a longer one is refused. */
export const IMPORT_MAX_LINE_BYTES = 1024 * 1024;

/** Rejected rows an import report lists one by one; the rest are only counted. */
export const MAX_LISTED_REJECTIONS = 1000;
