// Reads a V8 CPU profile (.cpuprofile, as `node --cpu-prof` writes it) into self time per function and
// per layer of the service: Koa, routing, auth, rate limit, validation, handler, SQL, serialisation,
// logging, Node's HTTP and sockets, garbage collection, and native time V8 cannot attribute. Built-in functions (JSON.stringify, regular
// expressions, ...) have no file: their time goes to the layer of the nearest caller that has one.

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** A function's self time in the profile. */
export interface FunctionTime {
  name: string;
  /** File and line (1-based), relative to the repository when inside it. */
  where: string;
  layer: string;
  ms: number;
}

/** Self time by layer and by function, busy time only (idle excluded). */
export interface ProfileSummary {
  busyMs: number;
  layers: Array<{ layer: string; ms: number }>;
  functions: FunctionTime[];
}

// First match wins: more specific paths come before the folders that contain them.
const LAYERS: Array<[string, RegExp]> = [
  ['logging', /\/node_modules\/(pino|sonic-boom|pino-std-serializers)\/|\/src\/http\/access-log\.|\/src\/logger\./],
  ['rate limit', /\/src\/orgs\/rate-limit|\/src\/http\/rate-limit\./],
  ['auth', /\/src\/orgs\/(authenticator|api-keys|api-key-queries)\.|\/src\/http\/authentication\.|\/lru-cache\//],
  [
    'validation',
    /\/node_modules\/(ajv|ajv-formats|fast-uri|fast-deep-equal)\/|\/generated\/validators|\/src\/contract\/|\/src\/http\/(request-checks|validation-errors|json-body)\./,
  ],
  [
    'routing',
    /\/node_modules\/(openapi-backend|@koa\/router|path-to-regexp|bath-es5|lodash|cookie)\/|\/src\/http\/(backend|api-routes|operation-pipeline|per-operation|handler-map|operation-input)\./,
  ],
  ['SQL', /\/node_modules\/(kysely|pg|pg-protocol|pg-types|pg-pool|postgres-[a-z]+)\/|queries\.|\/src\/database\//],
  ['serialisation', /\/src\/http\/(response|error-envelope)\.|\/mapper\./],
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

/** Summarises a parsed profile; `root` shortens file names. */
export function summariseProfile(profile: CpuProfile, root: string): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
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
  const selfMs = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    // A sample's time is the gap to the next sample.
    const micros = profile.timeDeltas[i + 1] ?? 0;
    selfMs.set(id, (selfMs.get(id) ?? 0) + micros / 1000);
  });
  const perLayer = new Map<string, number>();
  const perFunction = new Map<string, FunctionTime>();
  let busyMs = 0;
  for (const [id, ms] of selfMs) {
    const { callFrame } = byId.get(id)!;
    if (callFrame.functionName === '(idle)') continue;
    busyMs += ms;
    const layer = layerFor(id);
    perLayer.set(layer, (perLayer.get(layer) ?? 0) + ms);
    const where = callFrame.url ? `${shortPath(callFrame.url, root)}:${callFrame.lineNumber + 1}` : '(built-in)';
    const name = callFrame.functionName || '(anonymous)';
    const key = `${name} ${where} ${layer}`;
    const entry = perFunction.get(key) ?? { name, where, layer, ms: 0 };
    entry.ms += ms;
    perFunction.set(key, entry);
  }
  return {
    busyMs,
    layers: [...perLayer].map(([layer, ms]) => ({ layer, ms })).sort((a, b) => b.ms - a.ms),
    functions: [...perFunction.values()].sort((a, b) => b.ms - a.ms),
  };
}
