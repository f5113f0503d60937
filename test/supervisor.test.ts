// The Supervisor of `serve --processes N` over real forked children: a child that dies every time before
// it is up stops the service however slowly it dies, while one that was up before each death is only
// restarted. (The window rule and start timeout are shown through `serve` in roles.test.ts.)
import cluster, { type Worker } from 'node:cluster';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Supervisor, WORKER_UP_MESSAGE, type ChildRole } from '../src/cli/supervisor.js';
import { waitFor } from './support/calls.js';

// Every death is alone in its 1 ms window, so only the failed-start rule can give up.
const POLICY = { initialDelayMs: 10, maxDelayMs: 10, maxDeaths: 3, windowMs: 1, startTimeoutMs: 20_000 };
const logger = pino({ level: 'silent' });
let supervisor: Supervisor | null = null;

beforeAll(() => {
  cluster.setupPrimary({ exec: fileURLToPath(new URL('./support/supervised-child.mjs', import.meta.url)) });
});

afterEach(async () => {
  await supervisor?.stop('SIGKILL');
  supervisor = null;
});

describe('a supervised child', () => {
  it.each<ChildRole>(['api', 'worker'])(
    'of role %s that dies each time before it is up makes the service give up, however slowly',
    async (role) => {
      supervisor = new Supervisor([role], { SUPERVISED_CHILD: 'exit-at-once' }, logger, POLICY);
      await expect(supervisor.start()).rejects.toThrow(
        `the service could not start: ${role === 'api' ? 'an api' : 'a worker'} child died 3 times in a row before it was up`,
      );
    },
  );

  it('that was up before each death is only restarted', async () => {
    // Each worker child is told to die once it has said it is up.
    const killWhenUp = (worker: Worker, message: unknown) => {
      if (message === WORKER_UP_MESSAGE) worker.send('die');
    };
    cluster.on('message', killWhenUp);
    try {
      const env = { SUPERVISED_CHILD: 'up-then-exit-when-told', UP_MESSAGE: WORKER_UP_MESSAGE };
      supervisor = new Supervisor(['worker'], env, logger, POLICY);
      const gaveUp = supervisor.gaveUp.then(() => true);
      await supervisor.start();
      const restarts = async () => {
        const metrics = await supervisor!.metricsText();
        return Number(/^voice_call_child_process_restarts_total\{role="worker"\} (\d+)$/m.exec(metrics)?.[1]);
      };
      await waitFor('6 restarts of the worker child', async () => (await restarts()) >= 6, 20_000);
      expect(await Promise.race([gaveUp, Promise.resolve(false)])).toBe(false);
    } finally {
      cluster.off('message', killWhenUp);
    }
  });
});
