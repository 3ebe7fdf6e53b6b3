// Hot reads as typed, named prepared statements on the ORM's own connection pool (PostgreSQL parses and plans them
// once per connection), with rows mapped back to the ORM's entities so the same presenters serve them. Only for
// reads outside a transaction: inside one, the pool's connection is the transaction's (and PGlite has just one).
import { raw, type EntityClass, type FilterQuery, type FindOptions } from '@mikro-orm/core';
import { budgetedPage, type BudgetedPage, type TextBudget } from '../http/pagination.ts';

export type { TextBudget };
import type { EntityManager, PostgreSqlConnection } from '@mikro-orm/postgresql';
import type { ConnectionType } from './database.ts';

/**
 * Runs a named prepared statement and returns its rows; logged like every ORM query (tests count them). `connection`:
 * the pool it runs on (database.ts; `read` is the change stream's own).
 */
export async function preparedQuery<Row>(em: EntityManager, name: string, text: string, values: readonly unknown[], connection: ConnectionType = 'write'): Promise<Row[]> {
  const pool = await (em.getConnection(connection) as PostgreSqlConnection).getNativeClient();
  em.config.getLogger().logQuery({ query: text, params: values, level: 'info' });
  // one client for the statement and its retry: the deallocation must reach the session that refused the name
  const client = await pool.connect();
  try {
    try {
      return (await client.query({ name, text, values: values as unknown[] })).rows as Row[];
    } catch (error) {
      // PGlite is one session: a statement prepared by a connection since closed (a pool's idle one) is still there
      // when a new connection prepares it again. Forgotten, then prepared once more, on the same client.
      if ((error as { code?: string }).code !== DUPLICATE_PREPARED_STATEMENT) throw error;
      await client.query(`deallocate "${name}"`);
      return (await client.query({ name, text, values: values as unknown[] })).rows as Row[];
    }
  } finally {
    client.release();
  }
}

/** SQLSTATE duplicate_prepared_statement. */
const DUPLICATE_PREPARED_STATEMENT = '42P05';

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
 * for a list whose items carry text of unbounded total size (comment bodies, descriptions, the
 * texts of the objects each item embeds): `size` is an SQL expression over `from` estimating one item's text in bytes
 * from the stored values (octet_length reads a value's size without reading the value), and a page of results ends
 * early at `budget.bytes` (pagination.ts, `budgetedPage`); a large one waits its turn (`budget.admit`). Two statements: the sizes of the whole list, in order, then
 * the page's rows.
 */
export async function budgetedPageOfEntities<T extends object>(
  em: EntityManager,
  entity: EntityClass<T>,
  alias: string,
  from: string,
  parameters: readonly unknown[],
  order: string,
  size: string,
  budget: TextBudget,
): Promise<{ items: T[]; total: number; page: BudgetedPage }> {
  const sizes = await em.execute<{ bytes: string | number }[]>(`select ${size} as bytes ${from} order by ${order}`, [...parameters]);
  const page = budgetedPage(budget.query, sizes.map((row) => Number(row.bytes)), budget.bytes);
  await budget.admit(page.bytes);
  const rows = page.limit === 0
    ? []
    : await em.execute<Record<string, unknown>[]>(`select ${alias}.* ${from} order by ${order} limit ? offset ?`, [...parameters, page.limit, page.offset]);
  return { items: rows.map((row) => em.map(entity, row as never)), total: sizes.length, page };
}

/**
 * em.findAndCount for a list whose items carry text of their own (a note's or an issue's description, a comment's
 * body): `size` is an SQL expression over the entity's columns (as `item.column`) estimating one item's text in bytes, and a page of
 * results ends early at `budget.bytes` (pagination.ts, `budgetedPage`); a large one waits its turn (`budget.admit`).
 * Two statements, as findAndCount: the sizes
 * of the whole list in order (in place of its count), then the page's items.
 */
export async function findBudgeted<T extends object, P extends string = never>(
  em: EntityManager,
  entity: EntityClass<T>,
  where: FilterQuery<T>,
  options: FindOptions<T, P> & { orderBy: NonNullable<FindOptions<T, P>['orderBy']> },
  size: string,
  budget: TextBudget,
): Promise<{ items: Awaited<ReturnType<typeof em.find<T, P>>>; total: number; page: BudgetedPage }> {
  const sizes = await em.createQueryBuilder(entity, 'item').select(raw(`${size} as bytes`)).where(where as never).orderBy(options.orderBy as never).execute<{ bytes: string | number }[]>('all', false);
  const page = budgetedPage(budget.query, sizes.map((row) => Number(row.bytes)), budget.bytes);
  await budget.admit(page.bytes);
  const items = page.limit === 0 ? [] : await em.find(entity, where as never, { ...options, limit: page.limit, offset: page.offset });
  return { items: items as never, total: sizes.length, page };
}
