// The operation table: every operationId of the document with its handler (or the plain route that serves it). Typed
// by generated/operations.gen.ts, so an operation missing here, a handler for another operation, or a handler whose
// input or output drifts from the document fails `tsc`.
import type { OperationTable } from './handler.ts';
import { attachmentOperations } from '../modules/attachments/attachments.handlers.ts';
import { forkOperations } from '../modules/requests/forks.handlers.ts';
import { requestOperations } from '../modules/requests/requests.handlers.ts';
import { issueOperations } from '../modules/issues/issues.handlers.ts';
import { logOperations } from '../modules/logs/logs.handlers.ts';
import { notificationOperations } from '../modules/notifications/notifications.handlers.ts';
import { issueCommentOperations } from '../modules/comments/issue-comments.handlers.ts';
import { requestCommentOperations } from '../modules/comments/request-comments.handlers.ts';
import { noteCommentOperations } from '../modules/comments/note-comments.handlers.ts';
import { pageCommentOperations } from '../modules/comments/page-comments.handlers.ts';
import { oauthOperations } from '../modules/oauth/oauth.handlers.ts';
import { noteOperations } from '../modules/notes/notes.handlers.ts';
import { pageOperations } from '../modules/pages/pages.handlers.ts';
import { searchOperations } from '../modules/search/search.handlers.ts';
import { versionOperations } from '../modules/pages/versions.handlers.ts';
import { teamOperations } from '../modules/teams/teams.handlers.ts';
import { userOperations } from '../modules/users/users.handlers.ts';
import { webhookOperations } from '../modules/webhooks/webhooks.handlers.ts';
import { eventOperations } from '../modules/events/events.handlers.ts';
import { mcpOperations } from '../modules/mcp/mcp.handlers.ts';
import { exportOperations } from '../modules/exports/export.handlers.ts';
import { importOperations } from '../modules/imports/imports.handlers.ts';

export const operations: OperationTable = {
  ...userOperations,
  ...teamOperations,
  ...noteOperations,
  ...pageOperations,
  ...pageCommentOperations,
  ...noteCommentOperations,
  ...notificationOperations,
  ...logOperations,
  ...versionOperations,
  ...issueOperations,
  ...issueCommentOperations,
  ...requestCommentOperations,
  ...oauthOperations,
  ...attachmentOperations,
  ...forkOperations,
  ...requestOperations,
  ...searchOperations,
  ...webhookOperations,
  ...eventOperations,
  ...mcpOperations,
  ...exportOperations,
  ...importOperations,
};

