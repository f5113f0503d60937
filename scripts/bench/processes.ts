// Child processes under test: started by node itself (TypeScript through tsx's loader), so the pid is
// the server's; watched until they print their address, sampled for resident memory, and stopped by
// their own pid.
import { readdirSync, readFileSync } from 'node:fs';
import { spawnReady } from '../../test/support/child-process.js';

/** A running child process started by the benchmark. */
export interface Child {
  pid: number;
  /** The first capture group of the ready pattern (the base URL). */
  address: string;
  /** Milliseconds from spawn until the ready pattern was printed. */
  startMs: number;
  /** Everything the child wrote so far (for error reports). */
  output(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code. */
  stop(graceMs?: number): Promise<number | null>;
  /** SIGKILL at once, if still running. */
  kill(): void;
}

/**
 * Spawns `node <script>` (with `--import tsx` for a .ts script, plus `nodeArgs`) and resolves once its output
 * matches `ready`. Rejects, killing the child, when it exits first or `timeoutMs` passes.
 */
export async function startChild(
  script: string,
  options: { args?: string[]; nodeArgs?: string[]; env: NodeJS.ProcessEnv; ready: RegExp; timeoutMs: number },
): Promise<Child> {
  const started = performance.now();
  const nodeArgs = [...(options.nodeArgs ?? []), ...(script.endsWith('.ts') ? ['--import', 'tsx'] : [])];
  const ready = await spawnReady(process.execPath, [...nodeArgs, script, ...(options.args ?? [])], {
    env: options.env,
    ready: options.ready,
    timeoutMs: options.timeoutMs,
    name: script,
  });
  const startMs = performance.now() - started;
  const child = ready.process;
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    pid: child.pid!,
    address: ready.match[1] ?? '',
    startMs,
    output: ready.output,
    kill: () => {
      if (running()) child.kill('SIGKILL');
    },
    stop: async (graceMs = 15_000) => {
      if (!running()) return child.exitCode;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const code = await ready.exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** The resident set size of a process in MiB (Linux /proc); null when it cannot be read. */
export function rssMiB(pid: number): number | null {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** CPU time (user + system) a process has used so far, in ms (Linux /proc, 100 ticks per second). */
export function cpuMs(pid: number): number {
  // Fields after the command name (which may contain spaces): state is field 3, utime 14, stime 15.
  const stat = readStat(pid);
  if (!stat) throw new Error(`process ${pid} is not running`);
  return ticksToMs(stat.fields);
}

/** The pids of a process and all its descendants (Linux /proc), read now. */
function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (!stat) continue;
    const parent = Number(stat.fields[1]);
    children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i += 1) tree.push(...(children.get(tree[i]!) ?? []));
  return tree;
}

/** A process's command name and the fields of /proc/PID/stat after it; null when it has exited. */
function readStat(pid: number): { command: string; fields: string[] } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = text.lastIndexOf(')');
    return { command: text.slice(text.indexOf('(') + 1, close), fields: text.slice(close + 2).split(' ') };
  } catch {
    return null;
  }
}

const ticksToMs = (fields: string[]) => (Number(fields[11]) + Number(fields[12])) * 10;

/** CPU time used so far by a process and its descendants (a cluster's children), in ms. */
export function treeCpuMs(pid: number): number {
  return processTree(pid).reduce((sum, member) => {
    const stat = readStat(member);
    return sum + (stat ? ticksToMs(stat.fields) : 0);
  }, 0);
}

/** CPU time used so far by every running PostgreSQL process on the machine, in ms. */
export function postgresCpuMs(): number {
  let sum = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat?.command === 'postgres') sum += ticksToMs(stat.fields);
  }
  return sum;
}

/** CPU time used so far by each running PostgreSQL process, in ms, by pid. */
export function postgresCpuByProcess(): Map<number, number> {
  const used = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat?.command === 'postgres') used.set(Number(entry), ticksToMs(stat.fields));
  }
  return used;
}

/**
 * CPU time PostgreSQL's processes used since `before` (a postgresCpuByProcess reading), in ms: the
 * growth of each process running now, counting one started since from zero. A process that exited
 * in between is missed, so the figure is a lower bound (pooled connections live through a run).
 */
export function postgresCpuMsSince(before: Map<number, number>): number {
  let sum = 0;
  for (const [pid, ms] of postgresCpuByProcess()) sum += ms - (before.get(pid) ?? 0);
  return sum;
}

/** Samples a process's RSS every `intervalMs` until stopped; stop() returns the peak in MiB. */
export function sampleRss(pid: number, intervalMs = 200): { stop(): number } {
  let peak = rssMiB(pid) ?? 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, rssMiB(pid) ?? 0);
  }, intervalMs);
  return {
    stop: () => {
      clearInterval(timer);
      return Math.max(peak, rssMiB(pid) ?? 0);
    },
  };
}

/** The machine's CPU time so far (Linux /proc/stat, all cores): the total and what the hypervisor took (steal). */
export function machineCpuTicks(): { total: number; steal: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
  // cpu user nice system idle iowait irq softirq steal guest guest_nice; guest time is inside user's.
  const ticks = line.trim().split(/\s+/).slice(1, 9).map(Number);
  return { total: ticks.reduce((sum, value) => sum + value, 0), steal: ticks[7] ?? 0 };
}

/** The share of the machine's CPU time the hypervisor took since `before` (a machineCpuTicks reading), in percent. */
export function stealPercentSince(before: { total: number; steal: number }): number {
  const now = machineCpuTicks();
  const total = now.total - before.total;
  return total > 0 ? (100 * (now.steal - before.steal)) / total : 0;
}
