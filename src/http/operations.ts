// Every built operation, by operationId: the route table. What the document describes but is not here is listed in
// not-implemented.ts.
import type { BoundOperation } from './handler.ts';
import { pageCommentOperations } from '../modules/comments/page-comments.handlers.ts';
import { noteOperations } from '../modules/notes/notes.handlers.ts';
import { pageOperations } from '../modules/pages/pages.handlers.ts';
import { versionOperations } from '../modules/pages/versions.handlers.ts';
import { teamOperations } from '../modules/teams/teams.handlers.ts';
import { userOperations } from '../modules/users/users.handlers.ts';

export const operations: Record<string, BoundOperation> = {
  ...userOperations,
  ...teamOperations,
  ...noteOperations,
  ...pageOperations,
  ...pageCommentOperations,
  ...versionOperations,
} as Record<string, BoundOperation>;
