// The response headers the spec declares for an operation's status, read from the spec itself, and
// the problems with an answer's headers: a required one missing, or any declared one off its schema.
import { resolve, type Schema, type SpecDocument } from './spec/document.js';

/** One header the spec declares for a response: its name, whether required, and a pointer to its schema. */
export interface DeclaredHeader {
  name: string;
  required: boolean;
  pointer: string;
  /** The schema's type after following references, to read the text as a number where it is one. */
  type: string | undefined;
}

const escape = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

/** Follows a chain of local references from `node` at `pointer`, returning the last node and where it lives. */
function follow(document: SpecDocument, node: Schema, pointer: string): { node: Schema; pointer: string } {
  let current = node;
  let at = pointer;
  while (typeof current?.$ref === 'string' && current.$ref.startsWith('#/')) {
    at = current.$ref.slice(1);
    current = resolve(document, { $ref: current.$ref });
  }
  return { node: current, pointer: at };
}

/** The headers declared for `status` of the operation at `method path`; empty when the spec has no such response. */
export function declaredHeaders(
  document: SpecDocument,
  method: string,
  path: string,
  status: string,
): DeclaredHeader[] {
  const base = `/paths/${escape(path)}/${method.toLowerCase()}/responses/${status}`;
  const raw = document.paths?.[path]?.[method.toLowerCase()]?.responses?.[status];
  if (!raw) return [];
  const response = follow(document, raw, base);
  return Object.entries(response.node.headers ?? {}).map(([name, rawHeader]) => {
    const header = follow(document, rawHeader, `${response.pointer}/headers/${escape(name)}`);
    const schema = resolve<Schema>(document, header.node.schema ?? {});
    return {
      name,
      required: header.node.required === true,
      pointer: `${header.pointer}/schema`,
      type: typeof schema.type === 'string' ? schema.type : undefined,
    };
  });
}

/** A header's text as the value its schema describes: integers and numbers parsed when they are plain decimals. */
export function headerValue(header: DeclaredHeader, text: string): unknown {
  if ((header.type === 'integer' || header.type === 'number') && /^-?\d+(\.\d+)?$/.test(text)) return Number(text);
  return text;
}

/** The request the spec says an event of `kind` arrives as: its header parameters and a pointer to its body schema. */
export function declaredEvent(
  document: SpecDocument,
  kind: string,
): { headers: DeclaredHeader[]; bodyPointer: string } | undefined {
  const base = `/webhooks/${escape(kind)}/post`;
  const operation = document.webhooks?.[kind]?.post;
  if (!operation) return undefined;
  const headers = (operation.parameters ?? []).flatMap((raw, index) => {
    const parameter = follow(document, raw, `${base}/parameters/${index}`);
    if (parameter.node.in !== 'header') return [];
    const schema = resolve<Schema>(document, parameter.node.schema ?? {});
    return [
      {
        name: String(parameter.node.name),
        required: parameter.node.required === true,
        pointer: `${parameter.pointer}/schema`,
        type: typeof schema.type === 'string' ? schema.type : undefined,
      },
    ];
  });
  const body = follow(document, operation.requestBody ?? {}, `${base}/requestBody`);
  const schema = body.node.content?.['application/json']?.schema;
  if (!schema) return undefined;
  const located = follow(document, schema, `${body.pointer}/content/application~1json/schema`);
  return { headers, bodyPointer: located.pointer };
}
