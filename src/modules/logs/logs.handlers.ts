import { defineOperation, readerOf } from '../../http/handler.ts';
import { answerWith } from '../../http/answer.ts';
import { listBudget, listPlace } from '../../http/pagination.ts';
import { embedIds, loadEmbeds } from '../notifications/embeds.loader.ts';
import { embeddedTextBytes } from '../notifications/notifications.repository.ts';
import { languageOf } from '../notifications/time-ago.ts';
import { presentLog } from './log.presenter.ts';
import { findLogs } from './logs.service.ts';

export const logOperations = {
  /** What the caller may read, newest first; everything the entries embed is loaded once for the page. */
  listLogs: defineOperation('listLogs', { scope: 'caller', action: 'signed-in' }, async ({ query }, { caller }, context) => {
    const { logs, total, page } = await findLogs(context.em, caller.user.id, { team: query.team, noteId: query.note_id }, listBudget(context, query), embeddedTextBytes);
    const list = listPlace(page, total);
    const ids = embedIds();
    for (const log of logs) {
      ids.users.add(log.user.id);
      if (log.note) ids.notes.add(log.note.id);
      if (log.type === 'page' && log.page) ids.pages.add(log.page.id);
      if (log.type === 'issue' && log.issue) ids.issues.add(log.issue.id);
      if (log.type === 'request' && log.request) ids.requests.add(log.request.id);
      if (log.type === 'comment' && log.comment) ids.comments.add(log.comment.id);
      if (log.type === 'team' && log.team) ids.teams.add(log.team.id);
      if (log.type === 'attachment' && log.attachment) ids.attachments.add(log.attachment.id);
    }
    const embeds = await loadEmbeds(readerOf(context), ids);
    const reader = { language: languageOf(caller.user), now: new Date() };
    return answerWith(logs.flatMap((log) => presentLog(log, embeds, reader) ?? []), { list });
  }),
};
