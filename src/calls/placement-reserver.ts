// Group commit for the first step of the common placement (POST /calls without a key or a cap): while
// one statement stores an org's placements with their holds, that org's placements arriving meanwhile
// wait, and then go together in one statement. Every hold updates the org's balance row, so placements
// made at once (a client's burst) would otherwise queue for that row one statement and commit at a
// time. A placement asked alone is stored at once; each org's groups are stored one after another, and
// orgs never wait for each other.
import type { Db } from '../database/connect.js';
import { insertPlacementsWithQuietHold, type PlacementRow } from './placement-queries.js';

/** Placements one statement stores at the most. */
const MAX_GROUP = 50;

interface Waiting {
  placement: PlacementRow;
  resolve: (stored: boolean) => void;
  reject: (error: unknown) => void;
}

/** Stores placements with quiet holds in groups per org; see the file's header. */
export class PlacementReserver {
  private readonly waiting = new Map<string, Waiting[]>();

  constructor(private readonly db: Db) {}

  /**
   * Stores the placement and takes its hold as insertPlacementsWithQuietHold does for it alone: true
   * when stored, false (nothing written) when its hold does not fit or would owe a balance.low notice.
   * Rejects with the database's error.
   */
  reserve(placement: PlacementRow): Promise<boolean> {
    return new Promise((resolve, reject) => {
      const orgId = placement.org_id;
      const queue = this.waiting.get(orgId);
      if (queue) {
        queue.push({ placement, resolve, reject });
        return;
      }
      this.waiting.set(orgId, [{ placement, resolve, reject }]);
      void this.drain(orgId);
    });
  }

  /** Stores the org's waiting placements a group at a time until none is left. */
  private async drain(orgId: string): Promise<void> {
    const queue = this.waiting.get(orgId)!;
    while (queue.length > 0) {
      const group = queue.slice(0, MAX_GROUP);
      await this.store(group);
      queue.splice(0, group.length);
    }
    this.waiting.delete(orgId);
  }

  /**
   * Stores a group in one statement; when its holds together do not fit, each placement alone, so that
   * each gets its own answer (the holds of some may fit where all do not). A database error is every
   * entry's answer (the statement wrote nothing, and nothing in it is one placement's own: agents are
   * never deleted). Settles every entry.
   */
  private async store(group: Waiting[]): Promise<void> {
    const placements = group.map((entry) => entry.placement);
    try {
      if (await insertPlacementsWithQuietHold(this.db, placements)) {
        for (const entry of group) entry.resolve(true);
        return;
      }
      if (group.length === 1) {
        group[0]!.resolve(false);
        return;
      }
      for (const entry of group) entry.resolve(await insertPlacementsWithQuietHold(this.db, [entry.placement]));
    } catch (error) {
      for (const entry of group) entry.reject(error);
    }
  }
}

/** Each process's reservers (one per database handle, so apps in one test process stay apart). */
const reservers = new WeakMap<Db, PlacementReserver>();

/** The reserver of placements stored through `db`. */
export function reserverFor(db: Db): PlacementReserver {
  let reserver = reservers.get(db);
  if (!reserver) reservers.set(db, (reserver = new PlacementReserver(db)));
  return reserver;
}
