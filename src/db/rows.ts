// Hot reads as typed, named prepared statements on the ORM's own connection pool (PostgreSQL parses and plans them
// once per connection), with rows mapped back to the ORM's entities so the same presenters serve them. Only for
// reads outside a transaction: inside one, the pool's connection is the transaction's (and PGlite has just one).
import type { EntityClass } from '@mikro-orm/core';
import type { EntityManager, PostgreSqlConnection } from '@mikro-orm/postgresql';

/** Runs a named prepared statement and returns its rows; logged like every ORM query (tests count them). */
export async function preparedQuery<Row>(em: EntityManager, name: string, text: string, values: readonly unknown[]): Promise<Row[]> {
  const connection = em.getConnection() as PostgreSqlConnection;
  const pool = await connection.getNativeClient();
  em.config.getLogger().logQuery({ query: text, params: values, level: 'info' });
  const result = await pool.query({ name, text, values: values as unknown[] });
  return result.rows as Row[];
}

const columnLists = new Map<string, string>();

/** `alias.column as "alias.column"` for every stored column of the entity, to select several entities in one row. */
export function aliasedColumns(em: EntityManager, entity: EntityClass<object>, alias: string): string {
  const key = `${entity.name}:${alias}`;
  let list = columnLists.get(key);
  if (list === undefined) {
    list = storedColumns(em, entity).map((column) => `${alias}.${column} as "${alias}.${column}"`).join(', ');
    columnLists.set(key, list);
  }
  return list;
}

function storedColumns(em: EntityManager, entity: EntityClass<object>): string[] {
  const meta = em.getMetadata().get(entity);
  return meta.props
    .filter((prop) => (prop.kind === 'scalar' || prop.kind === 'm:1' || (prop.kind === '1:1' && prop.owner)) && !prop.lazy)
    .flatMap((prop) => prop.fieldNames);
}

const aliasedKeys = new Map<string, { column: string; key: string }[]>();

/** The entity whose columns were selected with `aliasedColumns(…, alias)`, or undefined where they are null. */
export function mapAliased<T extends object>(em: EntityManager, entity: EntityClass<T>, row: Record<string, unknown>, alias: string): T | undefined {
  if (row[`${alias}.id`] === null || row[`${alias}.id`] === undefined) return undefined;
  const cacheKey = `${entity.name}:${alias}`;
  let keys = aliasedKeys.get(cacheKey);
  if (keys === undefined) {
    keys = storedColumns(em, entity).map((column) => ({ column, key: `${alias}.${column}` }));
    aliasedKeys.set(cacheKey, keys);
  }
  const data: Record<string, unknown> = {};
  for (const { column, key } of keys) if (key in row) data[column] = row[key];
  return em.map(entity, data as never);
}

const jsonObjects = new Map<string, string>();

/** `json_build_object('column', alias.column, ...)` over the entity's stored columns, for rows nested in one answer. */
export function jsonColumns(em: EntityManager, entity: EntityClass<object>, alias: string): string {
  const key = `${entity.name}:${alias}`;
  let text = jsonObjects.get(key);
  if (text === undefined) {
    text = `json_build_object(${storedColumns(em, entity).map((column) => `'${column}', ${alias}.${column}`).join(', ')})`;
    jsonObjects.set(key, text);
  }
  return text;
}

/**
 * One page of `alias.*` rows of `from` (its FROM ... WHERE text, with `parameters`) in `order`, mapped to `entity`,
 * with the total count from the same statement (`count(*) over ()`); only a page past the end costs a second one.
 */
export async function pageOfEntities<T extends object>(
  em: EntityManager,
  entity: EntityClass<T>,
  alias: string,
  from: string,
  parameters: readonly unknown[],
  order: string,
  page: { perPage: number; offset: number },
): Promise<{ items: T[]; total: number }> {
  const rows = await em.execute<Record<string, unknown>[]>(
    `select ${alias}.*, count(*) over () as total_count ${from} order by ${order} limit ? offset ?`,
    [...parameters, page.perPage, page.offset],
  );
  let total = rows.length > 0 ? Number(rows[0]!.total_count) : 0;
  if (rows.length === 0 && page.offset > 0) total = Number((await em.execute<{ total: string }[]>(`select count(*) as total ${from}`, [...parameters]))[0]!.total);
  return { items: rows.map((row) => em.map(entity, row as never)), total };
}
