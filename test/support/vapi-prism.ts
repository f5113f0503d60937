// A Prism mock of Vapi's pinned OpenAPI document, limited to the operations the adapter calls.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, spawnPrism } from './prism-process.js';
import { vapiDocument } from './vapi.js';

type Json = Record<string, unknown>;

/** The operations the adapter calls, by path and method. */
const OPERATIONS: Record<string, string[]> = { '/call': ['post', 'get'], '/call/{id}': ['get'] };

/**
 * The schemas the adapter sends or reads, kept whole. Prism cannot start on the full 3 MB document
 * (its assistant, model and tool schemas refer to each other in cycles) within minutes, so a reference
 * to any other schema (an inline assistant, a squad, a model, costs...) becomes an open schema.
 */
const KEPT = new Set([
  'CreateCallDTO',
  'CreateCustomerDTO',
  'AssistantOverrides',
  'MonitorPlan',
  'Call',
  'CallBatchResponse',
  'Monitor',
  'Artifact',
  'Analysis',
  'Recording',
  'Mono',
  'UserMessage',
  'BotMessage',
  'SystemMessage',
  'ToolCallMessage',
  'ToolCallResultMessage',
]);

function pruned(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(pruned);
  if (!node || typeof node !== 'object') return node;
  const ref = (node as { $ref?: unknown }).$ref;
  if (typeof ref === 'string') return KEPT.has(ref.split('/').pop()!) ? node : {};
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, pruned(value)]));
}

/** The pinned document cut down to the adapter's operations and the schemas above. */
export function derivedVapiDocument(): Json {
  const document = vapiDocument();
  const allPaths = document['paths'] as Record<string, Record<string, unknown>>;
  const paths = Object.fromEntries(
    Object.entries(OPERATIONS).map(([route, methods]) => [
      route,
      Object.fromEntries(methods.map((method) => [method, allPaths[route]![method]])),
    ]),
  );
  const components = document['components'] as { schemas: Record<string, unknown>; securitySchemes: unknown };
  return {
    openapi: document['openapi'],
    info: document['info'],
    servers: document['servers'],
    paths: pruned(paths),
    components: {
      securitySchemes: components.securitySchemes,
      schemas: Object.fromEntries([...KEPT].map((name) => [name, pruned(components.schemas[name])])),
    },
  };
}

/** Starts `prism mock` of the derived document on a free loopback port; resolves once it listens. */
export async function startVapiPrism(): Promise<{ url: string; stop(): Promise<void> }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'vapi-prism-'));
  const file = path.join(dir, 'vapi-openapi.json');
  writeFileSync(file, JSON.stringify(derivedVapiDocument()));
  const port = await freePort();
  const { child } = await spawnPrism(['mock', file, '-h', '127.0.0.1', '-p', String(port)]);
  return {
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
