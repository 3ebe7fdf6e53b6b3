// Legacy form clients send every value as a string: `1`/`0` for booleans, a bare or empty field for "unset", a lone
// value where an array is meant. This step runs after the validator has matched the operation and before it
// validates the body, and reshapes the body along the operation's own request schema, so the OpenAPI document stays
// the only description of what each field is.
//
// Old clients also send back every field of a resource they know, computed ones included (`note[format]=html`,
// `note[id]`, `note[html_url]`). An input object marked `x-resource: Note` accepts the fields of that response
// schema it does not declare itself and drops them here (they are the service's to compute); a name the resource
// does not have at all still reaches the validator and answers 400.
import type { RequestHandler } from 'express';
import { HttpError } from './errors.ts';

type Schema = {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  allOf?: Schema[];
  oneOf?: Schema[];
  anyOf?: Schema[];
  const?: unknown;
  /** On an input object: the name of the resource's response schema (components.schemas), whose other fields are computed. */
  'x-resource'?: string;
};
type Document = { components?: { schemas?: Record<string, Schema>; requestBodies?: Record<string, unknown> } };

const REMOVE = Symbol('remove');

export function resolve(document: Document, schema: Schema | undefined, depth = 0): Schema | undefined {
  let current = schema;
  while (current?.$ref && depth < 32) {
    const pointer = current.$ref.replace(/^#\//, '').split('/').map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
    let target: unknown = document;
    for (const part of pointer) target = (target as Record<string, unknown> | undefined)?.[part];
    current = target as Schema | undefined;
    depth += 1;
  }
  return current;
}

function typesOf(document: Document, schema: Schema): Set<string> {
  const types = new Set<string>();
  const add = (item: Schema | undefined) => {
    const resolved = resolve(document, item);
    if (!resolved) return;
    if (Array.isArray(resolved.type)) resolved.type.forEach((type) => types.add(type));
    else if (resolved.type) types.add(resolved.type);
    for (const branch of [...(resolved.oneOf ?? []), ...(resolved.anyOf ?? []), ...(resolved.allOf ?? [])]) add(branch);
  };
  add(schema);
  return types;
}

function propertiesOf(document: Document, schema: Schema): { properties: Record<string, Schema>; required: Set<string> } {
  const properties: Record<string, Schema> = {};
  const required = new Set<string>();
  const visit = (item: Schema | undefined) => {
    const resolved = resolve(document, item);
    if (!resolved) return;
    Object.assign(properties, resolved.properties ?? {});
    (resolved.required ?? []).forEach((name) => required.add(name));
    for (const branch of [...(resolved.allOf ?? []), ...(resolved.oneOf ?? []), ...(resolved.anyOf ?? [])]) visit(branch);
  };
  visit(schema);
  return { properties, required };
}

type Problem = { pointer: string; detail: string };
const DECIMAL = /^-?[0-9]+$/;

export function coerce(document: Document, value: unknown, schemaRef: Schema | undefined, pointer = '', problems: Problem[] = []): unknown {
  const schema = resolve(document, schemaRef);
  if (!schema) return value;
  const types = typesOf(document, schema);
  // a bare key or an empty value where a list is meant (`tags%5B%5D`, `tags=`) is an empty list
  if (types.has('array') && (value === '' || (Array.isArray(value) && value.length === 1 && value[0] === ''))) return [];
  if (value === '' && !types.has('string')) return types.has('null') ? null : REMOVE;
  if (value === '' && types.has('null')) return null;
  if (types.has('integer') && !types.has('string') && typeof value === 'string' && !DECIMAL.test(value)) {
    // ajv's coercion would read `0x2`, `1e0` or ` 2` as numbers, and `1e309` as Infinity, which passes its maximum
    problems.push({ pointer, detail: 'must be an integer in decimal digits' });
    return value;
  }
  // a JSON `true`, `false` or `null` where a number is meant is a wrong type, not 1, 0 or 0 (ajv's coercion, which
  // the query's strings need, would take it so): `{"page": {"parent": true}}` must not move a page under page 1
  if ((types.has('integer') || types.has('number')) && !types.has('boolean') && !types.has('string')) {
    if (typeof value === 'boolean' || (value === null && !types.has('null'))) {
      problems.push({ pointer, detail: `must be ${types.has('integer') ? 'an integer' : 'a number'}, not ${String(value)}` });
      return value;
    }
  }
  if (types.has('boolean') && !types.has('string')) {
    if (value === 'true' || value === '1' || value === 1) return true;
    if (value === 'false' || value === '0' || value === 0) return false;
  }
  if (types.has('array')) {
    let list: unknown[] | undefined;
    if (Array.isArray(value)) list = value;
    else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') list = [value];
    else if (value && typeof value === 'object' && Object.keys(value).every((key) => /^\d+$/.test(key))) {
      // qs turns long `a[0]=..&a[25]=..` lists into objects keyed by index
      list = Object.entries(value).sort(([a], [b]) => Number(a) - Number(b)).map(([, item]) => item);
    }
    if (list) {
      const itemSchema = propertiesOrItems(document, schema);
      return list.map((item, index) => coerce(document, item, itemSchema, `${pointer}/${index}`, problems)).filter((item) => item !== REMOVE);
    }
  }
  if (types.has('object') && value && typeof value === 'object' && !Array.isArray(value)) {
    const { properties, required } = propertiesOf(document, schema);
    const result: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    for (const name of computedFields(document, schema, properties)) delete result[name];
    for (const [name, propertySchema] of Object.entries(properties)) {
      if (!(name in result)) continue;
      const coerced = coerce(document, result[name], propertySchema, `${pointer}/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`, problems);
      if (coerced === REMOVE) {
        if (required.has(name)) result[name] = null;
        else delete result[name];
      } else {
        result[name] = coerced;
      }
    }
    return result;
  }
  return value;
}

const computedCache = new WeakMap<Schema, Set<string>>();

/** The fields of the response schema named by `x-resource` that the input object does not declare. */
function computedFields(document: Document, schema: Schema, declared: Record<string, Schema>): Set<string> {
  let computed = computedCache.get(schema);
  if (!computed) {
    const resource = schema['x-resource'] ? document.components?.schemas?.[schema['x-resource']] : undefined;
    const all = resource ? Object.keys(propertiesOf(document, resource).properties) : [];
    computed = new Set(all.filter((name) => !(name in declared)));
    computedCache.set(schema, computed);
  }
  return computed;
}

function propertiesOrItems(document: Document, schema: Schema): Schema | undefined {
  if (schema.items) return schema.items;
  for (const branch of [...(schema.oneOf ?? []), ...(schema.anyOf ?? []), ...(schema.allOf ?? [])]) {
    const resolved = resolve(document, branch);
    if (resolved?.items) return resolved.items;
  }
  return undefined;
}

type OperationObject = { requestBody?: Schema & { content?: Record<string, { schema?: Schema }> } };

export function formCoercion(document: Document): RequestHandler {
  return (req, _res, next) => {
    const operation = (req as unknown as { openapi?: { schema?: OperationObject } }).openapi?.schema;
    const requestBody = resolve(document, operation?.requestBody) as OperationObject['requestBody'];
    if (!requestBody?.content || req.body === undefined || req.body === null || typeof req.body !== 'object') return next();
    const mediaType = Object.keys(requestBody.content).find((type) => req.is(type)) ?? 'application/json';
    const schema = requestBody.content[mediaType]?.schema;
    if (schema) {
      const problems: Problem[] = [];
      const coerced = coerce(document, req.body, schema, '', problems);
      if (problems.length > 0) {
        const detail = problems.map((problem) => `${problem.pointer} ${problem.detail}`).join('; ');
        return next(new HttpError(400, 'validation_failed', detail, { errors: problems }));
      }
      req.body = coerced === REMOVE ? {} : coerced;
    }
    next();
  };
}
