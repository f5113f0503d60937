// Reads V8 profiles of the service into amounts per function and per layer of the service: Koa,
// routing, auth, rate limit, validation, handler, SQL, serialisation, logging, Node's HTTP and sockets,
// garbage collection, and native time V8 cannot attribute. A CPU profile (.cpuprofile, as `node
// --cpu-prof` writes it) gives self time; a sampling heap profile (the inspector's
// HeapProfiler.stopSampling) gives bytes allocated. Built-in functions (JSON.stringify, regular
// expressions, ...) have no file: what they take goes to the layer of the nearest caller that has one.

/** A function in a profile's call tree. */
interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

/** A node of a call tree in flat form (a .cpuprofile's `nodes`). */
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** A node of a sampling heap profile: its call tree nested, with the bytes allocated in the node itself. */
export interface HeapProfileNode {
  id: number;
  callFrame: CallFrame;
  selfSize: number;
  children: HeapProfileNode[];
}

/** What a function takes of the profile: milliseconds of CPU, or bytes allocated. */
export interface FunctionAmount {
  name: string;
  /** File and line (1-based), relative to the repository when inside it. */
  where: string;
  layer: string;
  amount: number;
}

/** Amounts by layer and by function, largest first; idle time excluded. */
export interface ProfileSummary {
  total: number;
  layers: Array<{ layer: string; amount: number }>;
  functions: FunctionAmount[];
}

// First match wins: more specific paths come before the folders that contain them.
const LAYERS: Array<[string, RegExp]> = [
  ['logging', /\/node_modules\/(pino|sonic-boom|pino-std-serializers)\/|\/src\/http\/access-log\.|\/src\/logger\./],
  ['rate limit', /\/src\/orgs\/rate-limit/],
  ['auth', /\/src\/orgs\/(authenticator|api-keys|api-key-queries)\.|\/lru-cache\//],
  [
    'validation',
    /\/node_modules\/(ajv|ajv-formats|fast-uri|fast-deep-equal)\/|\/generated\/validators|\/src\/contract\/|\/src\/http\/(request-checks|json-body)\./,
  ],
  [
    'routing',
    /\/node_modules\/(openapi-backend|@koa\/router|path-to-regexp|bath-es5|lodash|cookie)\/|\/src\/http\/(api-routes|operation-pipeline|handler-map)\./,
  ],
  ['SQL', /\/node_modules\/(kysely|pg|pg-protocol|pg-types|pg-pool|postgres-[a-z]+)\/|queries\.|\/src\/database\//],
  ['serialisation', /\/src\/http\/(response|errors)\.|\/mapper\./],
  ['handler', /\/src\/(calls|contacts|webhooks|orgs)\//],
  [
    'Koa',
    /\/node_modules\/(koa|koa-compose|helmet|@koa\/bodyparser|co-body|raw-body|inflation|statuses|http-errors|on-finished)\/|\/src\/http\/|\/src\/app\./,
  ],
  ['async context', /^node:(internal\/)?async_hooks/],
  ['Node HTTP and sockets', /^node:/],
];

/** The layer a file belongs to ('other' when no rule matches). */
function layerOf(url: string): string | undefined {
  if (url === '') return undefined;
  return LAYERS.find(([, pattern]) => pattern.test(url))?.[0] ?? 'other';
}

/** A file URL as a path relative to `root` when inside it. */
function shortPath(url: string, root: string): string {
  const file = url.startsWith('file://') ? decodeURIComponent(new URL(url).pathname) : url;
  return file.startsWith(`${root}/`) ? file.slice(root.length + 1) : file;
}

/** Summarises a CPU profile in milliseconds of self time; `root` shortens file names. */
export function summariseCpuProfile(profile: CpuProfile, root: string): ProfileSummary {
  const selfMs = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    // A sample's time is the gap to the next sample.
    const micros = profile.timeDeltas[i + 1] ?? 0;
    selfMs.set(id, (selfMs.get(id) ?? 0) + micros / 1000);
  });
  return summarise(profile.nodes, selfMs, root);
}

/** Summarises a sampling heap profile in bytes allocated; `root` shortens file names. */
export function summariseHeapProfile(head: HeapProfileNode, root: string): ProfileSummary {
  const nodes: ProfileNode[] = [];
  const bytes = new Map<number, number>();
  const flatten = (node: HeapProfileNode) => {
    nodes.push({ id: node.id, callFrame: node.callFrame, children: node.children.map((child) => child.id) });
    bytes.set(node.id, node.selfSize);
    node.children.forEach(flatten);
  };
  flatten(head);
  return summarise(nodes, bytes, root);
}

/** Adds up each node's own amount by function and by layer. */
function summarise(nodes: ProfileNode[], own: Map<number, number>, root: string): ProfileSummary {
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  // The layer of a node: its own file's, else its nearest caller's with a file.
  const layers = new Map<number, string>();
  const layerFor = (id: number): string => {
    const known = layers.get(id);
    if (known) return known;
    const { callFrame } = byId.get(id)!;
    const special =
      callFrame.functionName === '(garbage collector)'
        ? 'garbage collection'
        : callFrame.functionName === '(program)'
          ? 'native, unattributed'
          : undefined;
    const up = parent.get(id);
    const layer = special ?? layerOf(callFrame.url) ?? (up === undefined ? 'other' : layerFor(up));
    layers.set(id, layer);
    return layer;
  };
  const perLayer = new Map<string, number>();
  const perFunction = new Map<string, FunctionAmount>();
  let total = 0;
  for (const [id, amount] of own) {
    const { callFrame } = byId.get(id)!;
    if (callFrame.functionName === '(idle)' || amount === 0) continue;
    total += amount;
    const layer = layerFor(id);
    perLayer.set(layer, (perLayer.get(layer) ?? 0) + amount);
    const where = callFrame.url ? `${shortPath(callFrame.url, root)}:${callFrame.lineNumber + 1}` : '(built-in)';
    const name = callFrame.functionName || '(anonymous)';
    const key = `${name} ${where} ${layer}`;
    const entry = perFunction.get(key) ?? { name, where, layer, amount: 0 };
    entry.amount += amount;
    perFunction.set(key, entry);
  }
  return {
    total,
    layers: [...perLayer].map(([layer, amount]) => ({ layer, amount })).sort((a, b) => b.amount - a.amount),
    functions: [...perFunction.values()].sort((a, b) => b.amount - a.amount),
  };
}
