// What the document says about bounds and answers, checked against the code that enforces them.
import { describe, expect, it } from 'vitest';
import { COMMENT_BODY_BYTES } from '../../src/modules/comments/comments.service.ts';
import { loadConfig } from '../../src/config.ts';
import { resolve } from '../../src/http/form-coercion.ts';
import { loadOpenApiDocument } from '../../src/http/openapi.ts';

type Schema = { $ref?: string; type?: string | string[]; minimum?: number; maximum?: number; properties?: Record<string, Schema>; items?: Schema };
type Operation = { operationId: string; parameters?: { $ref?: string }[]; responses: Record<string, unknown> };
const document = loadOpenApiDocument() as unknown as {
  info: { description: string };
  paths: Record<string, Record<string, Operation> & { parameters?: { $ref?: string }[] }>;
  components: { schemas: Record<string, Schema> };
};
const METHODS = ['get', 'put', 'post', 'patch', 'delete'];
const operations = Object.entries(document.paths).flatMap(([path, item]) =>
  METHODS.filter((method) => item[method]).map((method) => ({ path, method, operation: item[method]!, item })));
const isInteger = (schema: Schema | undefined) => [schema?.type].flat().includes('integer');

describe('the OpenAPI document', () => {
  it('bounds every integer parameter with a minimum and a maximum (PostgreSQL int; a bigint id: a safe JavaScript integer)', () => {
    const unbounded: string[] = [];
    for (const { path, method, operation, item } of operations) {
      for (const reference of [...(item.parameters ?? []), ...(operation.parameters ?? [])]) {
        const parameter = resolve(document as never, reference as never) as unknown as { name: string; schema: Schema & { format?: string } };
        const largest = parameter.schema.format === 'int64' ? Number.MAX_SAFE_INTEGER : 2147483647;
        if (isInteger(parameter.schema) && (parameter.schema.minimum === undefined || !(parameter.schema.maximum! <= largest))) unbounded.push(`${method} ${path} ${parameter.name}`);
      }
    }
    expect(unbounded).toEqual([]);
  });

  it('bounds every integer field of a request body', () => {
    const unbounded: string[] = [];
    const visit = (schema: Schema | undefined, at: string, seen: Set<Schema>) => {
      const resolved = resolve(document as never, schema as never) as Schema | undefined;
      if (!resolved || seen.has(resolved)) return;
      seen.add(resolved);
      if (isInteger(resolved) && (resolved.minimum === undefined || !(resolved.maximum! <= 2147483647))) unbounded.push(at);
      for (const [name, property] of Object.entries(resolved.properties ?? {})) visit(property, `${at}/${name}`, seen);
      if (resolved.items) visit(resolved.items, `${at}/0`, seen);
    };
    for (const name of Object.keys(document.components.schemas).filter((name) => name.endsWith('Input'))) visit(document.components.schemas[name], name, new Set());
    expect(unbounded).toEqual([]);
  });

  it('lists 501 on no operation: every operation it describes is built', () => {
    const with501 = operations.filter(({ operation }) => operation.responses['501']).map(({ operation }) => operation.operationId);
    expect(with501).toEqual([]);
  });

  it('has a Limits table that says what the service answers', () => {
    const rows = new Map(document.info.description.split('\n').filter((line) => line.trim().startsWith('|')).map((line) => {
      const cells = line.split('|').map((cell) => cell.trim());
      return [cells[1], cells.slice(2, -1)] as const;
    }));
    const config = loadConfig({});
    expect(rows.get('page content')).toEqual([`1 MiB (${config.limits.pageContentBytes.toLocaleString('en')} bytes of UTF-8)`, '413 `payload_too_large`']);
    expect(rows.get('comment')).toEqual([`64 KiB (${COMMENT_BODY_BYTES.toLocaleString('en')} bytes of UTF-8)`, '413 `payload_too_large`']);
    expect(rows.get('request body')?.[1]).toBe('413 `payload_too_large`');
    expect(rows.get('page tree depth')).toEqual([`${config.limits.pageTreeDepth} levels`, '422 `tree_too_deep`']);
    expect(rows.get('requests per token')?.[0]).toBe(`${config.rateLimitPerHour} per hour`);
    expect(rows.get('app registrations (`/oauth/register`)')?.[0]).toBe(`${config.oauth.registrationsPerAddress} per address per hour`);
  });
});
