// A per-org cap on work that may wait inside the database while holding a pool connection: at most
// `perOrg` of an org's tasks run at once in this process, the rest wait their turn in the service, in
// order, holding nothing. A placement's first step (the statement or transaction that takes its hold)
// waits for its org's balance row while another transaction has it; without the cap, one org's burst
// held up there would hold a connection per placement and could leave none for other orgs.

/** Runs tasks with at most a fixed number per org at once; see the file's header. */
export class OrgSlots {
  private readonly orgs = new Map<string, { running: number; waiting: Array<() => void> }>();

  constructor(private readonly perOrg: number) {}

  /** Runs `task` once fewer than `perOrg` of the org's tasks run; resolves or rejects as it does. */
  async run<T>(orgId: string, task: () => Promise<T>): Promise<T> {
    let org = this.orgs.get(orgId);
    if (!org) this.orgs.set(orgId, (org = { running: 0, waiting: [] }));
    if (org.running >= this.perOrg) await new Promise<void>((resolve) => org.waiting.push(resolve));
    else org.running += 1;
    try {
      return await task();
    } finally {
      const next = org.waiting.shift();
      if (next) next();
      else if ((org.running -= 1) === 0) this.orgs.delete(orgId);
    }
  }
}
