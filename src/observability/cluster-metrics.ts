// The metrics of `serve --processes N`: the primary asks each child for its metrics and serves them
// summed (prom-client's aggregation). A child that exits leaves its counters and histograms behind as
// it last answered, so a summed counter never goes down when a child is replaced: Prometheus would
// read the drop as a reset and count what the other children had counted all over again. A child that
// does not answer in time counts with its last answer, so one busy child does not fail the scrape.
import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue, type Registry } from 'prom-client';

/** One process's metrics, as prom-client writes them out as JSON. */
type MetricsJson = MetricObjectWithValues<MetricValue<string>>[];

const REQUEST = 'voice-call:metrics-request';
const ANSWER = 'voice-call:metrics-answer';

interface MetricsRequest {
  type: typeof REQUEST;
  id: number;
}

interface MetricsAnswer {
  type: typeof ANSWER;
  id: number;
  metrics: MetricsJson;
}

function isMessage<T extends { type: string }>(message: unknown, type: T['type']): message is T {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === type;
}

/** In a cluster child: answers the primary's requests for this process's metrics with `registry`'s. */
export function answerMetricsRequests(registry: Registry): void {
  process.on('message', (message: unknown) => {
    if (!isMessage<MetricsRequest>(message, REQUEST)) return;
    void registry.getMetricsAsJSON().then((metrics) => {
      const answer: MetricsAnswer = { type: ANSWER, id: message.id, metrics };
      // The primary may be gone by now (a shutdown); nothing is left to answer then.
      process.send?.(answer, undefined, undefined, () => undefined);
    });
  });
}

/** The series that only grow, and so stay counted after their process has exited. */
function growingOnly(metrics: MetricsJson): MetricsJson {
  return metrics.filter((metric) => {
    // The typings declare `type` a numeric enum; what prom-client writes out is the type's name.
    const type = String(metric.type);
    return (type === 'counter' || type === 'histogram') && metric.aggregator === 'sum';
  });
}

/** In the primary: the summed metrics of its children, those that have exited included. */
export class ClusterMetrics {
  /** The content type of `text()`. */
  readonly contentType = new AggregatorRegistry().contentType;
  /** Each live child's last answer, by cluster worker id. */
  private readonly lastAnswers = new Map<number, MetricsJson>();
  /** The counters and histograms of the children that have exited. */
  private retired: MetricsJson[] = [];
  /** Compactions of `retired`, one at a time. */
  private compacting: Promise<void> = Promise.resolve();
  private nextRequestId = 0;

  constructor(private readonly answerTimeoutMs: number) {
    cluster.on('exit', (worker) => this.retire(worker.id));
  }

  /** The Prometheus text of every child's metrics, summed; children are asked now. */
  async text(): Promise<string> {
    const children = Object.values(cluster.workers ?? {}).filter(
      (worker): worker is Worker => worker !== undefined && worker.isConnected(),
    );
    await Promise.all(children.map((worker) => this.ask(worker)));
    // Taken in one synchronous step, so a child that exits meanwhile is counted once: alive or retired.
    return AggregatorRegistry.aggregate([...this.lastAnswers.values(), ...this.retired]).metrics();
  }

  /** Asks `worker` for its metrics and keeps its answer; resolves after the answer or the timeout. */
  private ask(worker: Worker): Promise<void> {
    const id = (this.nextRequestId += 1);
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('exit', finish);
        resolve();
      };
      const onMessage = (message: unknown) => {
        if (!isMessage<MetricsAnswer>(message, ANSWER) || message.id !== id) return;
        if (!worker.isDead()) this.lastAnswers.set(worker.id, message.metrics);
        finish();
      };
      const timer = setTimeout(finish, this.answerTimeoutMs);
      worker.on('message', onMessage);
      worker.once('exit', finish);
      const request: MetricsRequest = { type: REQUEST, id };
      worker.send(request, undefined, (error: Error | null) => {
        if (error) finish();
      });
    });
  }

  /** Keeps the growing series of an exited child as it last answered, and forgets the rest. */
  private retire(workerId: number): void {
    const last = this.lastAnswers.get(workerId);
    this.lastAnswers.delete(workerId);
    if (!last) return;
    this.retired.push(growingOnly(last));
    // Many restarts over a long life are kept as one sum, not one entry each.
    this.compacting = this.compacting.then(async () => {
      const count = this.retired.length;
      if (count < 2) return;
      const merged = await AggregatorRegistry.aggregate(this.retired.slice(0, count)).getMetricsAsJSON();
      this.retired = [merged, ...this.retired.slice(count)];
    });
  }
}
