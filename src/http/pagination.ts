// Lists other than the page list: `page` (1-based) and `per_page` (default and maximum 100), with RFC 8288 Link
// headers (first, prev, next, last) and X-Total-Count.
import type { Request } from 'express';
import type { ListPlace } from './answer.ts';

export const DEFAULT_PER_PAGE = 100;

export type Pagination = { page: number; perPage: number; offset: number };

export function pagination(query: { page?: number | undefined; per_page?: number | undefined }): Pagination {
  const page = query.page ?? 1;
  const perPage = query.per_page ?? DEFAULT_PER_PAGE;
  return { page, perPage, offset: (page - 1) * perPage };
}

/**
 * A page of results of a list whose items carry text of their own (a page history: each version's content and
 * diff, up to megabytes each): at most `perPage` items, and no more items than fit in `budget` bytes of that text
 * (an item larger than the budget alone is a page of its own). The pages are cut from the start of the whole list by
 * the items' stored sizes, so every page of results is the same whichever is asked for, the `Link` headers lead
 * through all of them, and none is skipped; `last` is how many there are.
 */
export type BudgetedPage = Pagination & { limit: number; last: number; bytes: number };

export function budgetedPage(query: { page?: number | undefined; per_page?: number | undefined }, sizes: readonly number[], budget: number): BudgetedPage {
  const { page, perPage } = pagination(query);
  const starts = [0];
  let count = 0;
  let bytes = 0;
  for (let index = 0; index < sizes.length; index += 1) {
    const size = sizes[index]!;
    if (count > 0 && (count === perPage || bytes + size > budget)) {
      starts.push(index);
      count = 0;
      bytes = 0;
    }
    count += 1;
    bytes += size;
  }
  const offset = page <= starts.length ? starts[page - 1]! : sizes.length;
  const end = page < starts.length ? starts[page]! : sizes.length;
  let pageBytes = 0;
  for (let index = offset; index < end; index += 1) pageBytes += sizes[index]!;
  return { page, perPage, offset, limit: Math.max(0, end - offset), last: starts.length, bytes: pageBytes };
}

/**
 * What a list of long texts needs to cut its pages of results (db/rows.ts, `findBudgeted`): the page asked for, the
 * text one page of results may carry (LIMIT_LIST_TEXT_BYTES), and the gate a large page of results waits at before
 * its rows are read (answer-gate.ts).
 */
/** What `listBudget` reads of a handler's context (HandlerContext has it). */
type BudgetContext = { config: { limits: { listTextBytes: number } }; admit: (bytes: number) => Promise<void> };

export function listBudget(context: BudgetContext, query: { page?: number | undefined; per_page?: number | undefined }): TextBudget {
  return { query, bytes: context.config.limits.listTextBytes, admit: context.admit };
}

export type TextBudget = {
  query: { page?: number | undefined; per_page?: number | undefined };
  bytes: number;
  /** Resolves when a page of results with this much text may be built. */
  admit: (bytes: number) => Promise<void>;
};

/** The place of this page of results (`results`: its pagination, and for a budgeted list how many pages there are). */
export function listPlace({ page, perPage, last }: Pagination & { last?: number }, total: number): ListPlace {
  return { page, perPage, last, total };
}

/**
 * The Link (first, prev, next, last) and X-Total-Count headers of a page of results of the list `request` asked for;
 * `query`: the query parameters its operation declares.
 */
export function paginationHeaders(request: Request, base: string, query: ReadonlySet<string>, { page, perPage, last: pages, total }: ListPlace): Record<string, string> {
  const last = pages ?? Math.max(1, Math.ceil(total / perPage));
  const url = new URL(base + request.path);
  // Only the query parameters the operation defines, as the client wrote them: never unknown ones (a long junk
  // query would make the header larger than clients accept) and never `access_token` (auth.ts takes it anyway).
  for (const [name, value] of new URLSearchParams(request.url.split('?')[1] ?? '')) {
    if (query.has(name) && name !== 'page' && name !== 'per_page' && name !== 'access_token') url.searchParams.append(name, value);
  }
  const link = (target: number, rel: string) => {
    url.searchParams.set('page', String(target));
    url.searchParams.set('per_page', String(perPage));
    return `<${url.toString()}>; rel="${rel}"`;
  };
  const links = [link(1, 'first')];
  if (page > 1) links.push(link(Math.min(page - 1, last), 'prev'));
  if (page < last) links.push(link(page + 1, 'next'));
  links.push(link(last, 'last'));
  return { Link: links.join(', '), 'X-Total-Count': String(total) };
}
