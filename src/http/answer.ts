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
  /** A `Link` header of the operation's own (the change stream's rel="next"), where `list` does not make one. */
  readonly link: string | undefined;

  constructor(body: Body, headers: { etag?: string | undefined; list?: ListPlace | undefined; link?: string | undefined }) {
    this.body = body;
    this.etag = headers.etag;
    this.list = headers.list;
    this.link = headers.link;
  }
}

export function answerWith<Body>(body: Body, headers: { etag?: string; list?: ListPlace; link?: string }): Answer<Body> {
  return new Answer(body, headers);
}
