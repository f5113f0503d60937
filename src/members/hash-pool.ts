// A per-process bound on sign-in password hashes. A few run at once, a few more wait their turn in order,
// and one client address holds at most a couple of places; whoever finds no place is told at once, so a
// flood is refused in microseconds instead of queueing every other sign-in (and the CPU) behind it.

/** The pool's sizes. */
export interface HashPoolLimits {
  /** Hashes running at once. */
  atOnce: number;
  /** Places beyond those, for attempts waiting their turn. */
  waiting: number;
  /** Places one client address may hold. */
  perAddress: number;
  /** The longest an attempt may expect to wait for its turn, by the recent hashes' mean time. */
  maxWaitMs: number;
}

/** A place in the pool, held from admission (before the attempt's other checks) until `leave`. */
export interface HashTurn {
  /** Runs `task` once one of the running slots is free, in the order places asked. */
  run<T>(task: () => Promise<T>): Promise<T>;
  /** Gives the place back; later calls do nothing. */
  leave(): void;
}

/** Admits sign-in attempts to password hashing, fairly between client addresses. */
export class HashPool {
  private admitted = 0;
  private running = 0;
  private readonly queue: (() => void)[] = [];
  private readonly perAddress = new Map<string, number>();
  /** A moving mean of how long a task takes (0 until the first ends), to foresee a new place's wait. */
  private meanTaskMs = 0;

  constructor(private readonly limits: HashPoolLimits) {}

  /** A place for an attempt from `address`, or null when the pool or that address has none free. */
  admit(address: string): HashTurn | null {
    const held = this.perAddress.get(address) ?? 0;
    if (held >= this.limits.perAddress || this.admitted >= this.limits.atOnce + this.limits.waiting) return null;
    // On a slow machine a full queue would outwait the request deadline: a place more than one round of
    // hashes back is refused too when those rounds would take longer than the wait allowed.
    const rounds = Math.ceil((this.admitted + 1 - this.limits.atOnce) / this.limits.atOnce);
    if (rounds > 1 && rounds * this.meanTaskMs > this.limits.maxWaitMs) return null;
    this.admitted += 1;
    this.perAddress.set(address, held + 1);
    let left = false;
    return {
      run: (task) => this.runInTurn(task),
      leave: () => {
        if (left) return;
        left = true;
        this.admitted -= 1;
        const remaining = this.perAddress.get(address)! - 1;
        if (remaining === 0) this.perAddress.delete(address);
        else this.perAddress.set(address, remaining);
      },
    };
  }

  private async runInTurn<T>(task: () => Promise<T>): Promise<T> {
    if (this.running < this.limits.atOnce) this.running += 1;
    // A finished task hands its slot straight to the next in line, so the running count stays as it is.
    else await new Promise<void>((resolve) => this.queue.push(resolve));
    const started = performance.now();
    try {
      return await task();
    } finally {
      const took = performance.now() - started;
      this.meanTaskMs = this.meanTaskMs === 0 ? took : 0.8 * this.meanTaskMs + 0.2 * took;
      const next = this.queue.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}
