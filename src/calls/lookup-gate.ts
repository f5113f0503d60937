// Spaces one process's lookups to each provider at its lookupsPerSecond: a caller waits its turn.
import type { Metrics } from '../observability/metrics.js';
import type { VoiceProvider } from './provider/types.js';

/** The per-provider pacing of lookups in one process. */
export class LookupGate {
  private readonly nextFree = new Map<string, number>();

  constructor(private readonly metrics: Metrics) {}

  /** Resolves when `provider` may be asked again (at once for an unlimited one); counts the waits. */
  async take(provider: VoiceProvider): Promise<void> {
    if (!Number.isFinite(provider.lookupsPerSecond)) return;
    const now = Date.now();
    const free = Math.max(now, this.nextFree.get(provider.name) ?? 0);
    this.nextFree.set(provider.name, free + 1000 / provider.lookupsPerSecond);
    if (free <= now) return;
    this.metrics.providerLookupsThrottled.inc({ provider: provider.name });
    await new Promise((resolve) => setTimeout(resolve, free - now));
  }
}
