// The registry of sends in flight: each send's one signal carries its deadline, the worker's stop and
// its endpoint's deletion, and end() leaves nothing behind (no timer, no listener on the stop signal).
import { getEventListeners, once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { EndpointDeletedError, InFlightSends } from '../src/webhooks/delivery/in-flight.js';

const WEBHOOK = 'wh_1';

function registry(): InFlightSends {
  return new InFlightSends(
    () => Promise.resolve({ deleted: [], switchedOff: [] }),
    (error) => {
      throw error;
    },
  );
}

describe('InFlightSends.track', () => {
  it('aborts a send at its deadline with a TimeoutError, which is not a stop', async () => {
    const send = registry().track(WEBHOOK, { deadlineMs: 20 });
    await once(send.signal, 'abort');
    expect(send.signal.reason).toBeInstanceOf(DOMException);
    expect((send.signal.reason as DOMException).name).toBe('TimeoutError');
    expect(send.stopped).toBe(false);
    send.end();
  });

  it("aborts a send when the caller's stop fires, with the stop's reason", () => {
    const stop = new AbortController();
    const send = registry().track(WEBHOOK, { deadlineMs: 10_000, stop: stop.signal });
    expect(send.stopped).toBe(false);
    const reason = new Error('shutting down');
    stop.abort(reason);
    expect(send.signal.aborted).toBe(true);
    expect(send.signal.reason).toBe(reason);
    expect(send.stopped).toBe(true);
    send.end();
  });

  it('starts a send already stopped when the stop signal has fired', () => {
    const stop = new AbortController();
    stop.abort();
    const send = registry().track(WEBHOOK, { deadlineMs: 10_000, stop: stop.signal });
    expect(send.stopped).toBe(true);
    send.end();
  });

  it("aborts the endpoint's sends when its deletion begins, and only those", () => {
    const sends = registry();
    const doomed = sends.track(WEBHOOK, { deadlineMs: 10_000 });
    const other = sends.track('wh_2', { deadlineMs: 10_000 });
    expect(sends.abortEndpoint(WEBHOOK)).toBe(1);
    expect(doomed.signal.reason).toBeInstanceOf(EndpointDeletedError);
    expect(doomed.stopped).toBe(true);
    expect(other.signal.aborted).toBe(false);
    doomed.end();
    other.end();
  });

  it('leaves no listener on the stop signal and no live deadline once ended', async () => {
    const stop = new AbortController();
    const sends = registry();
    const ended = Array.from({ length: 100 }, () => sends.track(WEBHOOK, { deadlineMs: 20, stop: stop.signal }));
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(100);
    for (const send of ended) send.end();
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
    expect(sends.abortEndpoint(WEBHOOK)).toBe(0);
    await sleep(60);
    stop.abort();
    expect(ended.every((send) => !send.signal.aborted)).toBe(true);
  });
});
