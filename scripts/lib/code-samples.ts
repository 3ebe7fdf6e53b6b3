// The runnable examples of the API reference (`x-codeSamples`), made from the OpenAPI document by one set of rules
// and never written per operation, so that a new operation gets its samples and a changed schema changes them.
// test/api/code-samples.test.ts runs every one against a live server.
//
// Each operation gets `curl`; `curl (form)` beside it where the operation takes a form body as well as JSON (the
// bracket-named fields old clients send; an operation that takes only a form or an upload has that as its `curl`);
// and `TypeScript` (the generated SDK in generated/client, run from the root of a checkout). What a sample cannot know is a shell variable, in both languages (the TypeScript reads
// `process.env`), so that the text shown is the text that runs once they are set:
//   - the token: `$NOTES_TOKEN`, sent as a bearer where the operation needs one;
//   - each path parameter: its name in capitals (`{team}` -> `$TEAM`, `{client_id}` -> `$CLIENT_ID`);
//   - in a body or a required query parameter, an integer (request bodies' integers are ids and version numbers of
//     the reader's objects: `page[parent]` -> `$PARENT`, `page_versions` -> `$PAGE_VERSIONS`), a string the
//     document gives no example for (`token` -> `$TOKEN`), and a file (`file` -> `$FILE`).
// The server is `http://localhost:3000`, the document's first server.
//
// A body holds what the schema requires and what the document's example shows, with the example's values. A body
// the operation does not require is sent only when it needs no variable (an optional body of ids is left out).
// An answer the document gives only as bytes (a download) is written to `$FILE`.

type Schema = {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  example?: unknown;
  examples?: unknown[];
  format?: string;
};
type MediaType = { schema?: Schema; example?: unknown; examples?: Record<string, { value?: unknown; $ref?: string }> };
type Parameter = { $ref?: string; name: string; in: string; required?: boolean; schema?: Schema; example?: unknown };
type Response = { $ref?: string; content?: Record<string, MediaType> };
export type Operation = {
  operationId?: string;
  security?: Record<string, string[]>[];
  parameters?: Parameter[];
  requestBody?: { $ref?: string; required?: boolean; content?: Record<string, MediaType> };
  responses?: Record<string, Response>;
  'x-codeSamples'?: CodeSample[];
};
export type OpenApiDocument = {
  info?: { description?: string };
  servers?: { url: string }[];
  security?: Record<string, string[]>[];
  paths: Record<string, Record<string, Operation | Parameter[] | unknown> & { parameters?: Parameter[] }>;
  components?: Record<string, Record<string, unknown>>;
};

/** One entry of `x-codeSamples`, as Redoc reads it. */
export type CodeSample = { lang: 'bash' | 'typescript'; label: 'curl' | 'curl (form)' | 'TypeScript'; source: string };

export const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;
export const TOKEN_VARIABLE = 'NOTES_TOKEN';
/** The SDK package the TypeScript samples import (`make sdk`, sdk/README.md). */
export const SDK_PACKAGE = '@notes-service/sdk';

/** A value the reader supplies: a shell variable in the samples. */
class Variable {
  readonly name: string;
  readonly kind: 'integer' | 'string' | 'file';
  constructor(name: string, kind: 'integer' | 'string' | 'file') {
    this.name = name;
    this.kind = kind;
  }
}
type Value = Variable | string | number | boolean | null | Value[] | { [key: string]: Value };

/** `page_versions` -> `PAGE_VERSIONS`, `client_id` -> `CLIENT_ID`. */
export const variableName = (name: string): string => name.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_|_$/g, '').toUpperCase();

/** The variables a sample uses (`$NAME`), in order of first use. */
export function variablesOf(source: string): string[] {
  return [...new Set([...source.matchAll(/\$([A-Z][A-Z0-9_]*)/g)].map((match) => match[1]!))];
}

export type OperationSamples = { operationId: string; method: string; path: string; samples: CodeSample[] };

/** The samples of every operation of the document, in the document's order. */
export function codeSamples(document: OpenApiDocument): OperationSamples[] {
  const found: OperationSamples[] = [];
  for (const [template, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method] as Operation | undefined;
      if (!operation?.operationId) continue;
      found.push({ operationId: operation.operationId, method, path: template, samples: samplesOf(document, template, method, operation, item.parameters ?? []) });
    }
  }
  return found;
}

/** A copy of the document with `x-codeSamples` on every operation, and a word on the variables in its introduction. */
export function withCodeSamples(document: OpenApiDocument): OpenApiDocument {
  const copy = structuredClone(document);
  const byId = new Map(codeSamples(document).map((entry) => [entry.operationId, entry.samples]));
  for (const item of Object.values(copy.paths)) {
    for (const method of METHODS) {
      const operation = item[method] as Operation | undefined;
      if (operation?.operationId) operation['x-codeSamples'] = byId.get(operation.operationId)!;
    }
  }
  copy.info = { ...copy.info, description: `${copy.info?.description ?? ''}\n\n${INTRODUCTION}` };
  return copy;
}

const INTRODUCTION = `## Code samples

Every operation shows how to call it with \`curl\` (and with a form body, for the operations that take one, as older
clients send it) and with the TypeScript SDK, \`@notes-service/sdk\` (built from this document by \`make sdk\`;
install its tarball and run a sample with \`node sample.ts\`). They are made from this document by
\`scripts/code-samples.ts\`, and a test runs every one of them against a live server. What a sample cannot know is a
shell variable, which the TypeScript samples read from the environment: \`$NOTES_TOKEN\` (a token), each path
parameter in capitals (\`{team}\` is \`$TEAM\`, \`{page}\` is \`$PAGE\`), the ids a body names (\`page[parent]\` is
\`$PARENT\`) and \`$FILE\` for a file to upload or download to. For example:

\`\`\`sh
export NOTES_TOKEN=nt_... TEAM=platform NOTE=runbook
\`\`\``;

function samplesOf(document: OpenApiDocument, template: string, method: string, operation: Operation, shared: Parameter[]): CodeSample[] {
  const request = describeRequest(document, template, operation, shared);
  const body = request.body;
  const form = body?.multipart ? 'multipart' : body?.form ? 'form' : undefined;
  // JSON first where the operation takes it; an operation that takes only a form (an upload, OAuth) has that alone
  const samples: CodeSample[] = [{ lang: 'bash', label: 'curl', source: curl(request, method, body?.json ? 'json' : (form ?? 'none')) }];
  if (body?.json && form) samples.push({ lang: 'bash', label: 'curl (form)', source: curl(request, method, form) });
  samples.push({ lang: 'typescript', label: 'TypeScript', source: typescript(request, operation.operationId!) });
  return samples;
}

type Request = {
  baseUrl: string;
  template: string;
  authenticated: boolean;
  pathParameters: { name: string; variable: Variable }[];
  query: { name: string; value: Value }[];
  body?: { value: Value; json: boolean; form: boolean; multipart: boolean };
  binaryAnswer: boolean;
};

function describeRequest(document: OpenApiDocument, template: string, operation: Operation, shared: Parameter[]): Request {
  const resolve = <T>(value: T): T => deref(document, value);
  const parameters = [...shared, ...(operation.parameters ?? [])].map(resolve);
  const security = operation.security ?? document.security ?? [];
  const pathParameters = parameters
    .filter((parameter) => parameter.in === 'path')
    .map((parameter) => ({ name: parameter.name, variable: new Variable(variableName(parameter.name), isInteger(resolve(parameter.schema ?? {})) ? 'integer' : 'string') }));
  const query = parameters
    .filter((parameter) => parameter.in === 'query' && parameter.required)
    .map((parameter) => ({ name: parameter.name, value: leaf(resolve(parameter.schema ?? {}), parameter.example ?? parameter.schema?.example, parameter.name) }));
  const requestBody = resolve(operation.requestBody);
  let body: Request['body'];
  const content = requestBody?.content ?? {};
  const [mediaType] = Object.values(content);
  if (mediaType) {
    const value = valueOf(document, mediaType.schema ?? {}, exampleOf(document, mediaType), 'body');
    const wanted = requestBody!.required || !hasVariable(value);
    if (wanted && value !== undefined) {
      body = {
        value,
        json: 'application/json' in content,
        form: 'application/x-www-form-urlencoded' in content,
        multipart: 'multipart/form-data' in content,
      };
    }
  }
  const success = Object.entries(operation.responses ?? {}).filter(([status]) => status.startsWith('2')).map(([, response]) => resolve(response));
  const types = success.flatMap((response) => Object.keys(response.content ?? {}));
  // bytes to keep in a file (an attachment, a note's export zip): every success answer is a binary string
  const binaryAnswer = success.length > 0 && success.every((response) => {
    const bodies = Object.values(response.content ?? {}) as { schema?: { format?: string } }[];
    return bodies.length > 0 && bodies.every((body) => body.schema?.format === 'binary');
  });
  return {
    baseUrl: document.servers?.[0]?.url ?? 'http://localhost:3000',
    template,
    authenticated: security.some((requirement) => Object.keys(requirement).length > 0),
    pathParameters,
    query,
    body,
    binaryAnswer,
  };
}

function deref<T>(document: OpenApiDocument, value: T): T {
  let current = value as { $ref?: string } | undefined;
  for (let depth = 0; current && typeof current === 'object' && typeof current.$ref === 'string' && depth < 20; depth += 1) {
    const ref: string = current.$ref;
    current = ref.replace(/^#\//, '').split('/').reduce<unknown>((node, key) => (node as Record<string, unknown>)?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], document) as { $ref?: string };
  }
  return current as T;
}

function exampleOf(document: OpenApiDocument, mediaType: MediaType): unknown {
  if (mediaType.example !== undefined) return mediaType.example;
  const [first] = Object.values(mediaType.examples ?? {});
  return first ? deref(document, first).value : undefined;
}

const typesOf = (schema: Schema): string[] => (Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : []);
/** A number that is nothing else: an id or a version number (`id` of a JSON-RPC message, a string or an integer, is not). */
const isInteger = (schema: Schema): boolean => typesOf(schema).some((type) => type === 'integer' || type === 'number') && !typesOf(schema).includes('string');

/** The value of a request field: what the schema requires and the example shows, variables where the reader decides. */
function valueOf(document: OpenApiDocument, raw: Schema, given: unknown, name: string): Value | undefined {
  let schema = deref(document, raw);
  const alternative = schema.oneOf?.[0] ?? schema.anyOf?.[0];
  if (alternative) {
    const chosen = deref(document, alternative);
    schema = { ...chosen, example: schema.example !== undefined ? schema.example : chosen.example };
  }
  if (schema.allOf) schema = schema.allOf.map((part) => deref(document, part)).reduce((all, part) => ({ ...all, ...part, properties: { ...all.properties, ...part.properties }, required: [...(all.required ?? []), ...(part.required ?? [])] }), { ...schema, allOf: undefined } as Schema);
  const example = given !== undefined ? given : schema.example !== undefined ? schema.example : schema.examples?.[0];
  const types = typesOf(schema);
  const isObject = types.includes('object') || (types.length === 0 && (schema.properties !== undefined || isPlainObject(example)));
  if (isObject) {
    const shown = isPlainObject(example) ? example : {};
    const keys = [...new Set([...(schema.required ?? []), ...Object.keys(shown)])];
    const result: Record<string, Value> = {};
    for (const key of keys) {
      const field = valueOf(document, schema.properties?.[key] ?? {}, shown[key], key);
      if (field !== undefined) result[key] = field;
    }
    return result;
  }
  const isArray = types.includes('array') || (types.length === 0 && Array.isArray(example));
  if (isArray) {
    const items = deref(document, schema.items ?? {});
    const shown = Array.isArray(example) ? example : [undefined];
    // a list of ids is one variable, which may hold several separated by commas (`[$PAGE_VERSIONS]`)
    if (isInteger(items) || (typesOf(items).length === 0 && shown.length > 0 && shown.every((item) => typeof item === 'number'))) return [new Variable(variableName(name), 'integer')];
    return shown.map((item) => valueOf(document, items, item, name)).filter((item): item is Value => item !== undefined);
  }
  if (example === null) return null;
  return leaf(schema, example, name);
}

/** A scalar: integers and unknown strings are the reader's; otherwise the example, the constant, the default, the first allowed value. */
function leaf(schema: Schema, example: unknown, name: string): Value {
  if (schema.format === 'binary') return new Variable(variableName(name), 'file');
  if (isInteger(schema) || (typesOf(schema).length === 0 && typeof example === 'number')) return new Variable(variableName(name), 'integer');
  for (const candidate of [example, schema.const, schema.default, schema.enum?.find((value) => value !== null)]) {
    if (typeof candidate === 'string' || typeof candidate === 'boolean' || typeof candidate === 'number') return candidate;
  }
  if (typesOf(schema).includes('boolean')) return true;
  return new Variable(variableName(name), 'string');
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;

function hasVariable(value: Value | undefined): boolean {
  if (value instanceof Variable) return true;
  if (Array.isArray(value)) return value.some(hasVariable);
  if (isPlainObject(value)) return Object.values(value).some((field) => hasVariable(field as Value));
  return false;
}

// ---------------------------------------------------------------- curl

/** Single-quoted for the shell. */
const quote = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;
/** Double-quoted for the shell: variables expand, nothing else does. */
const doubleQuote = (text: string): string => `"${text.replace(/(["\\`])/g, '\\$1').replace(/\$(?![A-Z_])/g, '\\$')}"`;

function url(request: Request): string {
  let path = request.template;
  for (const { name, variable } of request.pathParameters) path = path.replace(`{${name}}`, `$${variable.name}`);
  const query = request.query.map(({ name, value }) => `${encodeURIComponent(name)}=${value instanceof Variable ? `$${value.name}` : encodeURIComponent(String(value))}`);
  return request.baseUrl + path + (query.length > 0 ? `?${query.join('&')}` : '');
}

/** The body as JSON text, with each variable where its value goes (`[$PAGE_VERSIONS]`, `"$TOKEN"`); on several lines when long. */
function jsonText(value: Value, depth = 0, pretty = false): string {
  if (value instanceof Variable) return value.kind === 'integer' ? `$${value.name}` : `"$${value.name}"`;
  const compact = (inner: Value) => jsonText(inner, depth + 1, false);
  const nested = (inner: Value) => jsonText(inner, depth + 1, pretty);
  const indent = (level: number) => '  '.repeat(level);
  if (Array.isArray(value)) {
    const flat = value.every((item) => !isPlainObject(item) && !Array.isArray(item));
    if (!pretty || flat) return `[${value.map(compact).join(',')}]`;
    return `[\n${value.map((item) => indent(depth + 1) + nested(item)).join(',\n')}\n${indent(depth)}]`;
  }
  if (isPlainObject(value)) {
    const entries = Object.entries(value);
    if (!pretty || entries.length === 0) return `{${entries.map(([key, field]) => `${JSON.stringify(key)}:${compact(field as Value)}`).join(',')}}`;
    return `{\n${entries.map(([key, field]) => `${indent(depth + 1)}${JSON.stringify(key)}: ${nested(field as Value)}`).join(',\n')}\n${indent(depth)}}`;
  }
  return JSON.stringify(value);
}

/** `-d '...'`, with the shell's quotes opened around each variable. */
function jsonArgument(value: Value): string {
  const oneLine = jsonText(value);
  // indented one step, under curl's options
  const text = oneLine.length > 72 ? jsonText(value, 1, true) : oneLine;
  const parts = text.split(/(\$[A-Z][A-Z0-9_]*)/);
  return parts.map((part, index) => (index % 2 === 1 ? `"${part}"` : part === '' ? '' : quote(part))).join('');
}

/** The fields of a form, in bracket names (`page[title]`, `tags[]`, `resolutions[0][page_id]`). */
function formFields(value: Value, prefix = ''): [string, Value][] {
  if (Array.isArray(value)) return value.flatMap((item, index) => (isPlainObject(item) || Array.isArray(item) ? formFields(item, `${prefix}[${index}]`) : formFields(item, `${prefix}[]`)));
  if (isPlainObject(value)) return Object.entries(value).flatMap(([key, field]) => formFields(field as Value, prefix ? `${prefix}[${key}]` : key));
  if (value === null) return [];
  return [[prefix, value]];
}

function curl(request: Request, method: string, body: 'json' | 'form' | 'multipart' | 'none'): string {
  const lines = [`curl${method === 'get' ? '' : ` -X ${method.toUpperCase()}`} ${doubleQuote(url(request))}`];
  if (request.authenticated) lines.push(`-H "Authorization: Bearer $${TOKEN_VARIABLE}"`);
  const value = request.body?.value;
  if (body === 'json' && value !== undefined) {
    lines.push(`-H 'Content-Type: application/json'`, `-d ${jsonArgument(value)}`);
  } else if ((body === 'form' || body === 'multipart') && value !== undefined) {
    const option = body === 'form' ? '--data-urlencode' : '-F';
    for (const [name, field] of formFields(value)) {
      if (field instanceof Variable) lines.push(`${option} ${doubleQuote(`${name}=${field.kind === 'file' ? '@' : ''}$${field.name}`)}`);
      else lines.push(`${option} ${quote(`${name}=${String(field)}`)}`);
    }
  }
  if (request.binaryAnswer) lines.push('--output "$FILE"');
  return lines.join(' \\\n  ');
}

// ---------------------------------------------------------------- TypeScript

const tsString = (text: string): string => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`;
const tsKey = (key: string): string => (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? key : tsString(key));

/** A value as TypeScript, variables read from the environment; objects on several lines (from `depth`) when long. */
function tsValue(value: Value, depth = 0, pretty = false): string {
  if (value instanceof Variable) {
    if (value.kind === 'integer') return `Number(process.env.${value.name})`;
    if (value.kind === 'file') return `await openAsBlob(process.env.${value.name}!)`;
    return `process.env.${value.name}!`;
  }
  if (Array.isArray(value)) return `[${value.map((item) => tsValue(item)).join(', ')}]`;
  if (isPlainObject(value)) {
    const entries = Object.entries(value);
    const oneLine = `{ ${entries.map(([key, field]) => `${tsKey(key)}: ${tsValue(field as Value)}`).join(', ')} }`;
    if (!pretty || oneLine.length + 2 * depth < 90) return oneLine;
    const indent = '  '.repeat(depth + 1);
    return `{\n${entries.map(([key, field]) => `${indent}${tsKey(key)}: ${tsValue(field as Value, depth + 1, true)},`).join('\n')}\n${'  '.repeat(depth)}}`;
  }
  if (typeof value === 'string') return tsString(value);
  return JSON.stringify(value);
}

function typescript(request: Request, operationId: string): string {
  const options = ['client'];
  if (request.pathParameters.length > 0) options.push(`path: ${tsValue(Object.fromEntries(request.pathParameters.map(({ name, variable }) => [name, variable])))}`);
  if (request.query.length > 0) options.push(`query: ${tsValue(Object.fromEntries(request.query.map(({ name, value }) => [name, value])))}`);
  if (request.body) options.push(`body: ${tsValue(request.body.value, 1, true)}`);
  // whatever the file's type, as bytes (the client would read a text/plain answer as a string)
  if (request.binaryAnswer) options.push(`parseAs: 'blob'`);
  options.push('throwOnError: true');
  const uploads = request.body !== undefined && formFields(request.body.value).some(([, field]) => field instanceof Variable && field.kind === 'file');
  const auth = request.authenticated ? `, token: process.env.${TOKEN_VARIABLE}` : '';
  return [
    ...(uploads || request.binaryAnswer ? [`import { ${uploads ? 'openAsBlob' : 'writeFileSync'} } from 'node:fs';`] : []),
    `import { createClient, ${operationId} } from '${SDK_PACKAGE}';`,
    '',
    `const client = createClient({ baseUrl: ${tsString(request.baseUrl)}${auth} });`,
    `const { data } = await ${operationId}({`,
    ...options.map((option) => `  ${option},`),
    '});',
    request.binaryAnswer ? 'writeFileSync(process.env.FILE!, Buffer.from(await data.arrayBuffer()));' : 'console.log(data);',
  ].join('\n');
}
