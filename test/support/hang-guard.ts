// The bound for a test whose work is slow by nature (many CLI processes, a 100,000-row import): it only
// tells a hang from slowness, so it is far above what the busiest CI machine takes, and never judges speed.

/** How long such a test, or one process it starts, may run before it counts as hung. */
export const HANG_GUARD_MS = 20 * 60_000;
