// What notifications and activity-log entries embed (their notes, pages, comments, teams and users), loaded for a
// whole list at once: one batch per kind of object, so a list costs a fixed number of statements whatever its
// length and its mix of types. A kind added later adds its set to `EmbedIds`, its batch to
// `loadEmbeds` and its map to `Embeds`; the presenters pick from the maps.
import type { Reader } from '../../cache/memory.ts';
import type { Attachment as AttachmentBody, Comment as CommentBody, Issue as IssueBody, Note as NoteBody, PageSummary as PageBody, Request as RequestBody, Team as TeamBody, User as UserBody } from '../../../generated/client/types.gen.ts';
import { shared } from '../../http/json.ts';

import { Attachment } from '../attachments/attachment.entity.ts';
import { presentAttachment } from '../attachments/attachment.presenter.ts';
import { Comment } from '../comments/comment.entity.ts';
import { presentComment, type CommentTarget } from '../comments/comment.presenter.ts';
import { Issue } from '../issues/issue.entity.ts';
import { presentIssue } from '../issues/issue.presenter.ts';
import { tagsOfIssues } from '../issues/issues.loader.ts';
import { MergeRequest } from '../requests/merge-request.entity.ts';
import { presentRequest } from '../requests/request.presenter.ts';
import { loadRequestViews, requestRelations } from '../requests/requests.loader.ts';
import { presentNote, type NoteView } from '../notes/note.presenter.ts';
import { loadNoteViews, notesByIds } from '../notes/notes.loader.ts';
import { Page } from '../pages/page.entity.ts';
import { presentPageReference } from '../pages/page.presenter.ts';
import { pageViewsWith } from '../pages/pages.loader.ts';
import { presentTeam } from '../teams/team.presenter.ts';
import { Team } from '../teams/team.entity.ts';
import { membersOf, teamView } from '../teams/teams.loader.ts';
import { presentUser } from '../users/user.presenter.ts';
import { User } from '../users/user.entity.ts';

export type EmbedIds = {
  users: Set<number>; notes: Set<number>; pages: Set<number>; issues: Set<number>; requests: Set<number>; comments: Set<number>; teams: Set<number>; attachments: Set<number>;
};
export type Embeds = {
  users: Map<number, UserBody>;
  notes: Map<number, NoteBody>;
  /** The caller's view of each note (its team and the caller's role in it). */
  noteViews: Map<number, NoteView>;
  pages: Map<number, PageBody>;
  issues: Map<number, IssueBody>;
  requests: Map<number, RequestBody>;
  comments: Map<number, CommentBody>;
  teams: Map<number, TeamBody>;
  attachments: Map<number, AttachmentBody>;
};

export function embedIds(): EmbedIds {
  return { users: new Set(), notes: new Set(), pages: new Set(), issues: new Set(), requests: new Set(), comments: new Set(), teams: new Set(), attachments: new Set() };
}

const list = (ids: Set<number>) => [...ids];

export async function loadEmbeds(reader: Reader, ids: EmbedIds): Promise<Embeds> {
  const { em, urls } = reader;
  // comments first: they name pages, users and notes of their own
  const comments = ids.comments.size === 0 ? [] : await em.find(Comment, { id: { $in: list(ids.comments) } }, { populate: ['user', 'mentions'] });
  for (const comment of comments) {
    ids.notes.add(comment.note.id);
    if (comment.page) ids.pages.add(comment.page.id);
    if (comment.issue) ids.issues.add(comment.issue.id);
    if (comment.request) ids.requests.add(comment.request.id);
  }
  const attachments = ids.attachments.size === 0 ? [] : await em.find(Attachment, { id: { $in: list(ids.attachments) } });
  for (const attachment of attachments) ids.notes.add(attachment.note.id);
  const issues = ids.issues.size === 0 ? [] : await em.find(Issue, { id: { $in: list(ids.issues) } }, { populate: ['fromUser', 'toUser'] });
  for (const issue of issues) ids.notes.add(issue.note.id);
  const pages = ids.pages.size === 0 ? [] : await em.find(Page, { id: { $in: list(ids.pages) } });
  for (const page of pages) ids.notes.add(page.note.id);
  const notes = await notesByIds(em, list(ids.notes));
  const noteViews = new Map((await loadNoteViews(reader, notes)).map((view) => [view.note.id, view]));
  const noteBodies = new Map([...noteViews].map(([id, view]) => [id, shared(presentNote(view, urls, 'read'))]));

  const pageViews = await pageViewsWith(reader, pages, (page) => {
    const note = noteBodies.get(page.note.id);
    return note ? { note, coverPageId: noteViews.get(page.note.id)!.note.coverPageId ?? null } : undefined;
  });
  const pageBodies = new Map([...pageViews].map(([id, view]) => [id, presentPageReference(view, urls)]));

  const tags = await tagsOfIssues(em, issues.map((issue) => issue.id));
  const issueBodies = new Map<number, IssueBody>();
  for (const issue of issues) {
    const noteView = noteViews.get(issue.note.id);
    const note = noteBodies.get(issue.note.id);
    if (!noteView || !note) continue;
    issueBodies.set(issue.id, shared(presentIssue({
      issue,
      note,
      fromUser: issue.fromUser,
      toUser: issue.toUser ?? null,
      tags: tags.get(issue.id) ?? [],
      subject: { role: noteView.team.role, callerId: reader.callerId },
    }, urls)));
  }

  // requests as their own operations present them (their notes, pages and diffs, for a whole list at once), with the
  // merge state known in memory: a list of notifications or log entries computes no merge (`mergeable` is null where
  // none is known yet; the request's own read computes it)
  const requests = ids.requests.size === 0 ? [] : await em.find(MergeRequest, { id: { $in: list(ids.requests) } }, { populate: requestRelations });
  const requestBodies = new Map((await loadRequestViews(reader, requests, 0)).map((view) => [view.request.id, shared(presentRequest(view, urls))]));

  const commentBodies = new Map<number, CommentBody>();
  for (const comment of comments) {
    const noteView = noteViews.get(comment.note.id);
    const noteBody = noteBodies.get(comment.note.id);
    if (!noteView || !noteBody) continue;
    let target: CommentTarget | undefined;
    if (comment.type === 'note') target = { type: 'note', note: noteBody };
    else if (comment.type === 'page' && comment.page && pageViews.has(comment.page.id)) target = { type: 'page', page: pageViews.get(comment.page.id)! };
    else if (comment.type === 'issue' && comment.issue && issueBodies.has(comment.issue.id)) target = { type: 'issue', issue: issueBodies.get(comment.issue.id)! };
    else if (comment.type === 'request' && comment.request && requestBodies.has(comment.request.id)) target = { type: 'request', request: requestBodies.get(comment.request.id)! };
    if (!target) continue;
    commentBodies.set(comment.id, presentComment({
      comment,
      author: comment.user,
      mentions: comment.mentions.getItems().sort((a, b) => a.id - b.id),
      caller: { id: reader.callerId, role: noteView.team.role },
      target,
    }, urls));
  }

  const attachmentBodies = new Map<number, AttachmentBody>();
  for (const attachment of attachments) {
    const note = noteBodies.get(attachment.note.id);
    if (note) attachmentBodies.set(attachment.id, shared(presentAttachment(attachment, note, urls)));
  }

  const teams = ids.teams.size === 0 ? [] : await em.find(Team, { id: { $in: list(ids.teams) } });
  const members = await membersOf(reader, teams.map((team) => team.id));
  const teamBodies = new Map(teams.map((team) => [team.id, presentTeam(teamView(team, members, reader.callerId), urls)]));

  const users = ids.users.size === 0 ? [] : await em.find(User, { id: { $in: list(ids.users) } });
  const userBodies = new Map(users.map((user) => [user.id, shared(presentUser(user, urls))]));
  return { users: userBodies, notes: noteBodies, noteViews, pages: pageBodies, issues: issueBodies, requests: requestBodies, comments: commentBodies, teams: teamBodies, attachments: attachmentBodies };
}
