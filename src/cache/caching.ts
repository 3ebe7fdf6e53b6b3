// What an operation keeps in memory, declared where the operation is defined (`defineOperation(id, { cache })`): the
// wrapper looks a kept answer up before the handler runs and keeps what the handler made (src/http/invoke.ts, and
// src/http/openapi.ts for the whole answers served before routing); handlers never touch a cache. Each declaration
// names its cache (memory.ts) and, as tags (tags.ts), everything its answer shows: the change feed drops the answer
// when any of them changes.
import type { Page as PageBody } from '../../generated/client/types.gen.ts';
import type { Answer } from '../http/answer.ts';
import { scopeTags, type PageScope } from '../modules/access/scope.ts';
import type { Memory } from './memory.ts';
import { tags, type Tag } from './tags.ts';

export type Caching<Scope, Body> = {
  /**
   * The answer shared by every caller who sees it alike (their role), kept while the scope loaded for the request
   * says nothing it shows has changed: looked up before the handler runs, and kept after it.
   */
  shared?: {
    get(memory: Memory, scope: Scope): Answer<Body> | undefined;
    keep(memory: Memory, scope: Scope, answer: Answer<Body>): void;
  };
  /** Everything the answer shows: the whole answer (its bytes, with its ETag) is kept per token and path until one changes. */
  shows(scope: Scope): readonly Tag[];
};

/**
 * getPage: the page's view, per role, while the note's and team's revisions (and a fork's original's) are those
 * the scope read (page-views.ts); the whole answer per token, shown by the note, its team, a fork's original and its
 * team, and the token itself.
 */
export const pageCaching: Caching<PageScope, PageBody> = {
  shared: {
    get: (memory, scope) => memory.pageViews.get(scope),
    keep: (memory, scope, answer) => memory.pageViews.keep(scope, answer),
  },
  shows(scope) {
    const shown = [...scopeTags(scope), tags.token(scope.caller.tokenId)];
    if (scope.note.forkedFrom) shown.push(tags.note(scope.note.forkedFrom.id), ...(scope.originalTeamId ? [tags.team(scope.originalTeamId)] : []));
    return shown;
  },
};
