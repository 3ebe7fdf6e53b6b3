// Auto-pagination: every item of a list, however many pages of results it takes. Lists answer a page of results with
// `Link: <...>; rel="next"` (RFC 8288) while more follow; the page list of a note answers `{ pages, last_page }`
// instead. paginate follows either to the end, asking each next page with the query the server's link gives.

/** What an operation of the generated SDK answers, as paginate reads it. */
type Answered = { data?: unknown; response?: Response };

/** The items of a page of results: the answer itself (an array), or a page list's `pages`. */
type ItemOf<Data> = Data extends readonly (infer Item)[] ? Item : Data extends { pages: readonly (infer Item)[] } ? Item : never;

/** The items `operation` answers a page of. */
type ItemsOf<Operation extends (options: never) => Promise<Answered>> = ItemOf<NonNullable<Awaited<ReturnType<Operation>>['data']>>;

/**
 * Every item of the list `operation` answers, page after page: `for await (const note of paginate(listNotes, { client }))`.
 * `options` are the operation's own (the client, the path, the query: `per_page` sets the page size).
 */
export async function* paginate<Operation extends (options: never) => Promise<Answered>>(
  operation: Operation,
  options: Parameters<Operation>[0],
): AsyncGenerator<ItemsOf<Operation>, void, undefined> {
  const call = operation as unknown as (options: object) => Promise<Answered>;
  const given = (options ?? {}) as { query?: object };
  let query: Record<string, unknown> = { ...(given.query ?? {}) };
  for (let pages = 0; ; pages += 1) {
    const { data, response } = await call({ ...given, query, throwOnError: true });
    const items = Array.isArray(data) ? data : ((data as { pages?: unknown[] } | undefined)?.pages ?? []);
    for (const item of items) yield item as ItemsOf<Operation>;
    const next = nextLink(response?.headers.get('link') ?? null);
    if (next !== undefined) {
      // the next page as the server's link names it (page, per_page and the filters asked for)
      query = { ...query, ...Object.fromEntries(new URL(next).searchParams) };
    } else if (!Array.isArray(data) && (data as { last_page?: boolean } | undefined)?.last_page === false) {
      query = { ...query, page: Number(query.page ?? 1) + 1 };
    } else {
      return;
    }
    if (pages > 100_000) throw new Error('paginate: more than 100,000 pages of results; stopping');
  }
}

/** The target of `rel="next"` in a Link header, if there is one. */
export function nextLink(header: string | null): string | undefined {
  for (const part of (header ?? '').split(/,\s*(?=<)/)) {
    const match = /^<([^>]*)>(.*)$/.exec(part.trim());
    if (match && /;\s*rel="?([^";]*\s)?next(\s[^";]*)?"?/.test(match[2]!)) return match[1];
  }
  return undefined;
}
