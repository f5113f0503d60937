// Writes finished attempts to the delivery log in batches: an attempt is written at once when the
// recorder is idle, and attempts that finish while batches are being written go together in the next
// one, so a busy process commits many attempts per round trip instead of one each.
import type { Db } from '../../database/connect.js';
import { isDatabaseUnavailable } from '../../database/faults.js';
import { recordAttempts, type AttemptRecord, type RecordOutcome } from '../attempt-queries.js';

/** Attempts written in one statement at most. */
const MAX_BATCH = 100;
/** Batches being written at once; more attempts wait for the next batch. */
const MAX_BATCHES_IN_FLIGHT = 2;

interface Waiting {
  record: AttemptRecord;
  resolve(outcome: RecordOutcome): void;
  reject(error: unknown): void;
}

/** Batches attempt records of one process (see recordAttempts for what each write does). */
export class AttemptRecorder {
  private queue: Waiting[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(private readonly db: Db) {}

  /**
   * Records one attempt with the next batch; resolves with its outcome. Rejects with the database's
   * error when the write failed (nothing of this attempt was written then).
   */
  record(record: AttemptRecord): Promise<RecordOutcome> {
    return new Promise((resolve, reject) => {
      this.queue.push({ record, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= MAX_BATCHES_IN_FLIGHT) return;
    this.scheduled = true;
    // After the current turn of the event loop, so attempts that finish together share a batch.
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.queue.length > 0 && this.inFlight < MAX_BATCHES_IN_FLIGHT) {
      const batch = this.queue.splice(0, MAX_BATCH);
      this.inFlight += 1;
      void this.write(batch).finally(() => {
        this.inFlight -= 1;
        if (this.queue.length > 0) this.schedule();
      });
    }
  }

  private async write(batch: Waiting[]): Promise<void> {
    try {
      const outcomes = await recordAttempts(
        this.db,
        batch.map((waiting) => waiting.record),
      );
      batch.forEach((waiting, index) => waiting.resolve(outcomes[index]!));
    } catch (error) {
      if (batch.length === 1 || isDatabaseUnavailable(error)) {
        for (const waiting of batch) waiting.reject(error);
        return;
      }
      // Something in one record failed the statement (a deadlock with another writer, say): each is
      // written on its own, so the others are not held back by it.
      await Promise.all(
        batch.map((waiting) =>
          recordAttempts(this.db, [waiting.record]).then(
            ([outcome]) => waiting.resolve(outcome!),
            (error: unknown) => waiting.reject(error),
          ),
        ),
      );
    }
  }
}
