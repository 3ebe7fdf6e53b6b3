// The issue operations: list, show, create, update (PUT and PATCH alike), delete, add tags, and the caller's
// assigned issues across notes. Creating, editing and tagging take `note.edit` (every member of the note's team);
// deleting takes `issue.manage` (the creator while in the team, or a manager).
import { actorOf } from '../access/caller.ts';
import type { IssueUpdateInput } from '../../../generated/client/types.gen.ts';
import { defineOperation, noContent, readerOf, type HandlerContext } from '../../http/handler.ts';
import { answerWith } from '../../http/answer.ts';
import { findBudgeted } from '../../db/rows.ts';
import { listBudget, listPlace } from '../../http/pagination.ts';
import { authorize, type NoteScope } from '../access/scope.ts';
import type { Note } from '../notes/note.entity.ts';
import { Membership } from '../teams/team.entity.ts';
import { Issue } from './issue.entity.ts';
import { presentIssue } from './issue.presenter.ts';
import { ISSUE_TEXT_BYTES } from './issues.repository.ts';
import { loadIssueView, loadIssueViews, requireIssueInNote, type LoadedIssue } from './issues.loader.ts';
import { addIssueTags, createIssue, deleteIssue, updateIssue } from './issues.service.ts';

type State = 'open' | 'closed' | 'all';

/** `state`: open (the default) or closed issues, or all of them. */
function stateFilter(state: State | undefined): { isDone?: boolean } {
  if (state === 'closed') return { isDone: true };
  if (state === 'all') return {};
  return { isDone: false };
}

/** A note's issues in the order the team set: by position, index breaking ties. */
const byPosition = [{ position: 'asc' }, { index: 'asc' }] as const;
/** The caller's assigned issues: newest first. */
const newestFirst = [{ createdAt: 'desc' }, { id: 'desc' }] as const;

async function presentIssues(context: HandlerContext, issues: readonly LoadedIssue[]) {
  const views = await loadIssueViews(readerOf(context), issues);
  return views.map((view) => presentIssue(view, context.urls));
}

/** Presents the issue as stored now (after a write: read again, with its users and tags). */
async function answerIssue(context: HandlerContext, note: Note, index: number) {
  const issue = await requireIssueInNote(context.em, note.id, index);
  return presentIssue(await loadIssueView(readerOf(context), issue), context.urls);
}

async function update(context: HandlerContext, scope: NoteScope, index: number, fields: IssueUpdateInput['issue']) {
  const issue = await requireIssueInNote(context.em, scope.note.id, index);
  await updateIssue(context.em, actorOf(scope.caller), scope.note, issue, fields);
  return answerIssue(context, scope.note, index);
}

export const issueOperations = {
  listIssues: defineOperation('listIssues', { scope: 'note', action: 'note.read' }, async ({ query }, scope, context) => {
    const { items: issues, total, page: results } = await findBudgeted(
      context.em,
      Issue,
      { note: scope.note.id, ...stateFilter(query.state) },
      { populate: ['fromUser', 'toUser'], orderBy: [...byPosition] },
      ISSUE_TEXT_BYTES,
      listBudget(context, query),
    );
    const list = listPlace(results, total);
    return answerWith(await presentIssues(context, issues), { list });
  }),

  getIssue: defineOperation('getIssue', { scope: 'note', action: 'note.read' }, async ({ path }, scope, context) => answerIssue(context, scope.note, path.index)),

  createIssue: defineOperation('createIssue', { scope: 'note', action: 'note.edit' }, async ({ body }, scope, context) => {
    const issue = await createIssue(context.em, actorOf(scope.caller), scope.note, body.issue);
    return answerIssue(context, scope.note, issue.index);
  }),

  updateIssue: defineOperation('updateIssue', { scope: 'note', action: 'note.edit' }, async ({ path, body }, scope, context) =>
    update(context, scope, path.index, body.issue)),
  updateIssueViaPut: defineOperation('updateIssueViaPut', { scope: 'note', action: 'note.edit' }, async ({ path, body }, scope, context) =>
    update(context, scope, path.index, body.issue)),

  deleteIssue: defineOperation('deleteIssue', { scope: 'note', action: 'issue.manage' }, async ({ path }, scope, context) => {
    const issue = await requireIssueInNote(context.em, scope.note.id, path.index);
    authorize(scope, 'issue.manage', { creatorId: issue.fromUser.id });
    await deleteIssue(context.em, actorOf(scope.caller), scope.note, issue);
    return noContent;
  }),

  /** An empty list (no `tags`, a bare `tags[]`) changes nothing and answers the issue. */
  addIssueTags: defineOperation('addIssueTags', { scope: 'note', action: 'note.edit' }, async ({ path, body }, scope, context) => {
    const issue = await requireIssueInNote(context.em, scope.note.id, path.index);
    await addIssueTags(context.em, actorOf(scope.caller), scope.note, issue, body?.tags ?? []);
    return answerIssue(context, scope.note, path.index);
  }),

  /** Issues assigned to the caller in notes they may read: not private, or of a team they are in. */
  listMyIssues: defineOperation('listMyIssues', { scope: 'caller', action: 'signed-in' }, async ({ query }, { caller }, context) => {
    const { em } = context;
    const teamIds = (await em.find(Membership, { user: caller.user.id }, { fields: ['team'] })).map((membership) => membership.team.id);
    const { items: issues, total, page: results } = await findBudgeted(
      em,
      Issue,
      { toUser: caller.user.id, ...stateFilter(query.state), note: { $or: [{ isPrivate: false }, { team: { $in: teamIds } }] } },
      { populate: ['note.team', 'fromUser', 'toUser'], orderBy: [...newestFirst] },
      ISSUE_TEXT_BYTES,
      listBudget(context, query),
    );
    const list = listPlace(results, total);
    return answerWith(await presentIssues(context, issues), { list });
  }),
};
