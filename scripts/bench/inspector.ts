// A minimal client of the V8 inspector protocol, for sampling where a benchmarked server allocates
// memory: the server runs with `--inspect=127.0.0.1:0`, prints its WebSocket address, and this module
// drives HeapProfiler over Node's built-in WebSocket. (chrome-remote-interface would do the same, but
// brings ws 7 and commander 2 for these few messages.)
import type { HeapProfileNode } from './profile-summary.js';

/** Bytes between two allocation samples: small enough to see a request's few-hundred-byte objects. */
const SAMPLING_INTERVAL_BYTES = 512;

/** The inspector address a process printed ("Debugger listening on ws://..."); throws when it printed none. */
export function inspectorAddress(output: string): string {
  const match = /Debugger listening on (ws:\/\/\S+)/.exec(output);
  if (!match) throw new Error('the process printed no inspector address (was it started with --inspect?)');
  return match[1]!;
}

/** One open inspector session: sends a command and resolves with its result. */
async function openSession(address: string): Promise<{
  send: (method: string, params?: object) => Promise<unknown>;
  close: () => void;
}> {
  const socket = new WebSocket(address);
  const waiting = new Map<number, { resolve: (result: unknown) => void; reject: (error: Error) => void }>();
  let lastId = 0;
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } };
    const pending = message.id === undefined ? undefined : waiting.get(message.id);
    if (!pending) return;
    waiting.delete(message.id!);
    if (message.error) pending.reject(new Error(`inspector: ${message.error.message}`));
    else pending.resolve(message.result);
  });
  socket.addEventListener('close', () => {
    for (const pending of waiting.values()) pending.reject(new Error('inspector: the connection closed'));
    waiting.clear();
  });
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener('open', () => resolve(), { once: true });
    socket.addEventListener('error', () => reject(new Error(`inspector: cannot connect to ${address}`)), {
      once: true,
    });
  });
  return {
    send: (method, params = {}) =>
      new Promise((resolve, reject) => {
        const id = ++lastId;
        waiting.set(id, { resolve, reject });
        socket.send(JSON.stringify({ id, method, params }));
      }),
    close: () => socket.close(),
  };
}

/**
 * Samples every allocation of the process at `address` (kept or collected since) while `during` runs;
 * resolves with what `during` resolved with and the call tree of the sampled allocations.
 */
export async function sampleAllocations<T>(
  address: string,
  during: () => Promise<T>,
): Promise<{ result: T; head: HeapProfileNode }> {
  const session = await openSession(address);
  try {
    await session.send('HeapProfiler.enable');
    await session.send('HeapProfiler.startSampling', {
      samplingInterval: SAMPLING_INTERVAL_BYTES,
      includeObjectsCollectedByMinorGC: true,
      includeObjectsCollectedByMajorGC: true,
    });
    const result = await during();
    const { profile } = (await session.send('HeapProfiler.stopSampling')) as { profile: { head: HeapProfileNode } };
    return { result, head: profile.head };
  } finally {
    session.close();
  }
}
