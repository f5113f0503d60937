// The PostgreSQL notification channels of webhook delivery: how processes wake each other.

/** Notified (on commit) when deliveries may be due: new events, redeliveries. */
export const DELIVERY_CHANNEL = 'webhook_deliveries';

/** Notified (at once, not on commit) with an endpoint's id when its deletion begins: abort sends to it. */
export const DELETION_CHANNEL = 'webhook_deletions';

/** Notified (at once, not on commit) with an endpoint's id when it is switched off: abort sends to it. */
export const SWITCH_OFF_CHANNEL = 'webhook_switch_offs';
