import type { Comment as CommentBody } from '../../../generated/client/types.gen.ts';
import type { Urls } from '../../http/urls.ts';
import { can, type Role } from '../access/policy.ts';
import type { Issue as IssueBody, Note as NoteBody, Request as RequestBody } from '../../../generated/client/types.gen.ts';
import { presentPageReference, type PageView } from '../pages/page.presenter.ts';
import { presentUser } from '../users/user.presenter.ts';
import type { User } from '../users/user.entity.ts';
import type { Comment } from './comment.entity.ts';
import { presentVia } from '../oauth/oauth.presenter.ts';

/**
 * The commented object as presented, named by the comment's `type`; each kind of comment adds its own variant here
 * (and to `presentTarget`). The note arrives already presented: every comment of a list shares it.
 */
export type CommentTarget = { type: 'page'; page: PageView } | { type: 'note'; note: NoteBody } | { type: 'issue'; issue: IssueBody } | { type: 'request'; request: RequestBody };

function presentTarget(target: CommentTarget, urls: Urls): Pick<CommentBody, 'type' | 'note' | 'page' | 'issue' | 'request'> {
  switch (target.type) {
    case 'page':
      return { type: 'page', page: presentPageReference(target.page, urls) };
    case 'note':
      return { type: 'note', note: target.note };
    case 'issue':
      return { type: 'issue', issue: target.issue };
    case 'request':
      return { type: 'request', request: target.request };
  }
}

/** A comment with everything its presentation embeds, loaded by loadCommentViews (comments.service.ts). */
export type CommentView = {
  comment: Comment;
  author: User;
  /** The mentioned users, in a stable order (by id). */
  mentions: readonly User[];
  /** Who is looking, and their role in the note's team: `can_delete` depends on both. */
  caller: { id: number; role: Role };
  target: CommentTarget;
};

export function presentComment(view: CommentView, urls: Urls): CommentBody {
  const { comment, caller, target } = view;
  return {
    id: comment.id,
    comment: comment.body,
    user_id: view.author.id,
    created_at: comment.createdAt.toISOString(),
    updated_at: comment.updatedAt.toISOString(),
    user: presentUser(view.author, urls),
    mentions: view.mentions.map((user) => presentUser(user, urls)),
    can_delete: can('comment.delete', { role: caller.role, callerId: caller.id }, { authorId: view.author.id }),
    ...presentTarget(target, urls),
    via: presentVia(comment),
    model: 'comment',
  };
}
