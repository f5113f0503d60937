// The dashboard's view limits: page sizes, the delivery log's length, the largest CSV form, word breaks.

/** How many delivery attempts an endpoint page shows (the spec's delivery log). */
export const DELIVERY_LOG_SIZE = 100;
/** Rows per page of the calls and contacts lists. */
export const PAGE_SIZE = 50;
/** How many audit entries the audit page shows. */
export const AUDIT_PAGE_SIZE = 200;
/** The longest CSV accepted from the contacts page's form, in bytes. */
export const MAX_CSV_BYTES = 2 * 1024 * 1024;
/**
 * Outside text with a run of more characters than this without a space (an id, a URL, a long email)
 * may break anywhere; shorter words are never broken, so table columns keep them whole.
 */
export const LONG_WORD_CHARS = 30;
