// The operations the OpenAPI document describes that are not built yet: each answers 501 problem details with code
// `not_implemented`. This is the only list of them; a test checks it against the document and the handlers. Every
// issue that builds an operation removes it from here.
export const notImplementedOperations: readonly string[] = [
  // note comments
  'listNoteComments', 'createNoteComment', 'deleteNoteComment',
  // forks
  'createFork', 'pullFork', 'listChecks',
  // issues
  'listIssues', 'getIssue', 'createIssue', 'updateIssue', 'updateIssueViaPut', 'deleteIssue',
  'listIssueComments', 'createIssueComment', 'deleteIssueComment', 'addIssueTags', 'listMyIssues',
  // requests
  'listRequests', 'getRequest', 'createRequest', 'openRequest', 'closeRequest', 'mergeRequest',
  // attachments
  'listAttachments', 'createAttachment', 'deleteAttachment', 'downloadAttachment', 'getAttachment',
  // notifications, activity log, search
  'listNotifications', 'toggleNotification', 'toggleNotificationViaPut', 'listLogs', 'searchNotes',
];
