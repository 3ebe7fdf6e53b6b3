// What a handler returns beside a bare body: the body with what the wrapper writes next to it (openapi.ts).

/** Where a page of results sits in its list: what the wrapper turns into the Link and X-Total-Count headers. */
export type ListPlace = { page: number; perPage: number; last?: number | undefined; total: number };

/**
 * A 200 body with what the wrapper writes beside it: the ETag of what it shows, and for a page of results of a list
 * its place in the list (the Link and X-Total-Count headers). A handler returns data; only the wrapper writes HTTP.
 */
export class Answer<Body> {
  readonly body: Body;
  readonly etag: string | undefined;
  readonly list: ListPlace | undefined;

  constructor(body: Body, headers: { etag?: string | undefined; list?: ListPlace | undefined }) {
    this.body = body;
    this.etag = headers.etag;
    this.list = headers.list;
  }
}

export function answerWith<Body>(body: Body, headers: { etag?: string; list?: ListPlace }): Answer<Body> {
  return new Answer(body, headers);
}
