// The contacts feature's limits, named in one place.

/** Rows a CSV import writes per transaction. */
export const IMPORT_BATCH_SIZE = 1000;

/** Rejected rows an import report lists one by one; the rest are only counted. */
export const MAX_LISTED_REJECTIONS = 1000;
