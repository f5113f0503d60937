// Group commit for the second transaction of placements: while GROUPS_AT_ONCE groups are being
// recorded, placements the provider took meanwhile wait, and are then recorded together in one
// transaction (recordPlacements), so many placements at once (POST /calls under load, a campaign's
// dispatch) write their org's rows once per group, not once per call. A placement asked alone is
// recorded at once.
import type { AppDeps } from '../app-deps.js';
import type { Placed, VoiceProvider } from './provider/types.js';
import { findCall, type CallRow } from './queries.js';
import { recordPlacements } from './placement-record.js';
import type { PlacementRow } from './placement-queries.js';

/** Placements one transaction records at the most. */
const MAX_GROUP = 25;

/** Groups recorded at once (each on a connection of its own). */
const GROUPS_AT_ONCE = 4;

interface Waiting {
  placement: PlacementRow;
  placed: Placed;
  resolve: (call: CallRow | null) => void;
  reject: (error: unknown) => void;
}

/** Records one provider's placements as calls in groups; see the file's header. */
export class PlacementRecorder {
  private readonly waiting: Waiting[] = [];
  private recording = 0;

  constructor(
    private readonly deps: AppDeps,
    private readonly provider: VoiceProvider,
  ) {}

  /**
   * Records a placement the provider took; resolves with its call. When recovery settled the placement
   * first (its recording waited past the placement's recovery time), that is the call recovery recorded,
   * or null when recovery voided it.
   */
  async record(placement: PlacementRow, placed: Placed): Promise<CallRow | null> {
    const call = await new Promise<CallRow | null>((resolve, reject) => {
      this.waiting.push({ placement, placed, resolve, reject });
      void this.drain();
    });
    return call ?? (await findCall(this.deps.db, placement.org_id, placement.id)) ?? null;
  }

  /** Records waiting placements in groups while fewer than GROUPS_AT_ONCE groups are being recorded. */
  private async drain(): Promise<void> {
    if (this.recording >= GROUPS_AT_ONCE) return;
    this.recording += 1;
    while (this.waiting.length > 0) {
      const group = this.waiting.splice(0, MAX_GROUP);
      let results: Array<PromiseSettledResult<CallRow | null>>;
      try {
        results = await recordPlacements(this.deps, this.provider, group);
      } catch (error) {
        // Not expected (each placement's error is its own result), but no caller may wait forever.
        results = group.map(() => ({ status: 'rejected', reason: error }));
      }
      for (const [index, entry] of group.entries()) {
        const result = results[index]!;
        if (result.status === 'fulfilled') entry.resolve(result.value);
        else entry.reject(result.reason);
      }
    }
    this.recording -= 1;
  }
}

/** Each process's recorders (one per deps, so apps in one test process stay apart), by provider. */
const recorders = new WeakMap<AppDeps, Map<VoiceProvider, PlacementRecorder>>();

/** The recorder of `provider`'s placements in the process `deps` belongs to. */
export function recorderFor(deps: AppDeps, provider: VoiceProvider): PlacementRecorder {
  let ofDeps = recorders.get(deps);
  if (!ofDeps) recorders.set(deps, (ofDeps = new Map<VoiceProvider, PlacementRecorder>()));
  let recorder = ofDeps.get(provider);
  if (!recorder) ofDeps.set(provider, (recorder = new PlacementRecorder(deps, provider)));
  return recorder;
}
