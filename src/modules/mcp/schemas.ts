// The MCP tools' input schemas, derived from the OpenAPI document (generated/openapi.json): a tool's argument is an
// operation's path or query parameter, or a field of its request body's resource object (`page[content]` is the
// argument `content`), with that parameter's or field's JSON Schema and description, `$ref`s resolved. So a tool
// takes what the operation takes, and a change to the document changes the tool.
import type { OpenApiDocument } from '../../http/openapi.ts';

type Schema = Record<string, unknown>;
type Operation = { parameters?: Schema[]; requestBody?: { content?: Record<string, { schema?: Schema }> } };

/** Where an argument goes in the operation's request. */
export type ArgumentSource = { in: 'path' | 'query' } | { in: 'body'; field: string; resource?: string };

/** An argument of a tool: its name, where it goes, and its schema as the document states it. */
export type ToolArgument = { name: string; source: ArgumentSource & { name: string }; schema: Schema; required: boolean };

const HTTP_METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;

/** `$ref`s replaced by what they point at (a reference met again inside itself is left as `{}`: any value). */
function resolve(document: OpenApiDocument, value: unknown, seen: readonly string[] = []): unknown {
  if (Array.isArray(value)) return value.map((item) => resolve(document, item, seen));
  if (!value || typeof value !== 'object') return value;
  const ref = (value as { $ref?: unknown }).$ref;
  if (typeof ref === 'string') {
    if (seen.includes(ref)) return {};
    const target = ref.replace(/^#\//, '').split('/').reduce<unknown>((node, key) => (node as Record<string, unknown>)?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], document);
    return resolve(document, target, [...seen, ref]);
  }
  const out: Schema = {};
  for (const [key, item] of Object.entries(value)) {
    // the document's own extensions and examples are not for a model
    if (key.startsWith('x-') || key === 'example' || key === 'examples') continue;
    out[key] = resolve(document, item, seen);
  }
  return out;
}

/** The operation `operationId` of the document, with the parameters of its path item. */
export function findOperation(document: OpenApiDocument, operationId: string): { method: string; path: string; parameters: Schema[]; body: Schema | undefined } {
  for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, unknown>>)) {
    for (const method of HTTP_METHODS) {
      const operation = item[method] as (Operation & { operationId?: string }) | undefined;
      if (operation?.operationId !== operationId) continue;
      const parameters = [...((item.parameters as Schema[] | undefined) ?? []), ...(operation.parameters ?? [])].map((parameter) => resolve(document, parameter) as Schema);
      const body = operation.requestBody?.content?.['application/json']?.schema;
      return { method: method.toUpperCase(), path, parameters, body: body ? resolve(document, body) as Schema : undefined };
    }
  }
  throw new Error(`the OpenAPI document has no operation ${operationId}`);
}

export type ArgumentNames = {
  parameters?: readonly string[];
  fields?: readonly string[];
  top?: readonly string[];
  /** Required although the document does not say so, or not required although it does. */
  required?: readonly string[];
  optional?: readonly string[];
  /** The tool's name for an input whose name another takes (`query:page` -> `results_page`): `in:name` -> name. */
  rename?: Readonly<Record<string, string>>;
};

/**
 * The arguments of a tool for `operationId`: the named parameters (in: path or query), for an operation with a
 * body `{ <resource>: { ...fields } }` the named fields of the resource, and named fields of the body itself (`top`). Required as the document says (a path
 * parameter always), unless `optional` names it.
 */
export function toolArguments(document: OpenApiDocument, operationId: string, names: ArgumentNames): ToolArgument[] {
  const operation = findOperation(document, operationId);
  const found: ToolArgument[] = [];
  const taken = new Set<Schema>();
  for (const name of names.parameters ?? []) {
    // a name given twice is the path's and then the query's (`page` of a page, `page` of the results)
    const parameter = operation.parameters.find((candidate) => candidate.name === name && !taken.has(candidate));
    if (parameter) taken.add(parameter);
    if (!parameter) throw new Error(`${operationId} has no parameter ${name}`);
    const schema = { ...(parameter.schema as Schema), ...(parameter.description ? { description: parameter.description } : {}) };
    found.push({ name, source: { in: parameter.in as 'path' | 'query', name }, schema, required: parameter.in === 'path' || parameter.required === true });
  }
  if (names.fields?.length) {
    const properties = (operation.body?.properties ?? {}) as Record<string, Schema>;
    const [resource, object] = Object.entries(properties).find(([, schema]) => schema.type === 'object') ?? [];
    if (!resource || !object) throw new Error(`${operationId} has no resource object in its body`);
    const fields = (object.properties ?? {}) as Record<string, Schema>;
    const required = new Set((object.required as string[] | undefined) ?? []);
    for (const name of names.fields) {
      if (!fields[name]) throw new Error(`${operationId}'s ${resource} has no field ${name}`);
      found.push({ name, source: { in: 'body', resource, field: name, name }, schema: fields[name]!, required: required.has(name) });
    }
  }
  const top = (operation.body?.properties ?? {}) as Record<string, Schema>;
  const topRequired = new Set((operation.body?.required as string[] | undefined) ?? []);
  for (const name of names.top ?? []) {
    if (!top[name]) throw new Error(`${operationId}'s body has no field ${name}`);
    found.push({ name, source: { in: 'body', field: name, name }, schema: top[name]!, required: topRequired.has(name) });
  }
  return found.map((argument) => {
    const name = names.rename?.[`${argument.source.in}:${argument.name}`] ?? argument.name;
    const required = names.required?.includes(name) ? true : names.optional?.includes(name) ? false : argument.required;
    return { ...argument, name, required };
  });
}

/** The JSON Schema of a tool's input: an object of its arguments. */
export function inputSchema(toolArguments: readonly ToolArgument[]): { type: 'object'; properties: Record<string, Schema>; required: string[]; additionalProperties: false } {
  return {
    type: 'object',
    properties: Object.fromEntries(toolArguments.map((argument) => [argument.name, argument.schema])),
    required: toolArguments.filter((argument) => argument.required).map((argument) => argument.name),
    additionalProperties: false,
  };
}
