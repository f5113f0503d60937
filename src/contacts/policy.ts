// The contacts feature's limits, named in one place.

/** Rows a CSV import reads per transaction: each batch commits its contacts, events and progress together. */
export const IMPORT_BATCH_SIZE = 1000;
/** The longest line (and CSV record) a contact file may have, in bytes: a row is far shorter, so a longer one is refused. */
export const IMPORT_MAX_LINE_BYTES = 1024 * 1024;

/** Rejected rows an import report lists one by one; the rest are only counted. */
export const MAX_LISTED_REJECTIONS = 1000;

/**
 * A running import whose last batch committed longer ago than this is taken for abandoned (its process
 * stopped): the org's next import ends it as failed. A batch takes well under a second.
 */
export const IMPORT_STALE_MS = 60_000;
/** How long the dashboard's import form waits for the import to end before showing its progress page instead. */
export const IMPORT_WAIT_IN_REQUEST_MS = 3_000;
/** The Retry-After of an import refused because this process runs as many as it may. */
export const IMPORT_RETRY_AFTER_S = 30;
