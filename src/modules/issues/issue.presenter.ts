import type { Issue as IssueBody, Note as NoteBody } from '../../../generated/client/types.gen.ts';
import type { Urls } from '../../http/urls.ts';
import { can, type Subject } from '../access/policy.ts';
import { renderDescription } from '../notes/description.ts';
import { presentUser, type UserFields } from '../users/user.presenter.ts';
import type { Issue } from './issue.entity.ts';
import { presentVia } from '../oauth/oauth.presenter.ts';

/**
 * An issue with everything its presentation embeds, loaded by issues.loader.ts. `note` is the note already
 * presented (`read`, shared: every issue of a list embeds the one object); `subject` is who is looking and their
 * role in the note's team (`can_manage` depends on both).
 */
export type IssueView = {
  issue: Issue;
  note: NoteBody;
  fromUser: UserFields;
  toUser: UserFields | null;
  /** Tag names, in the order they were added to the issue. */
  tags: readonly string[];
  subject: Subject;
};

export function issueLabel(issue: Pick<Issue, 'index' | 'title'>): string {
  return `Issue #${issue.index} ${issue.title}`;
}



/** Pure: usable wherever an issue is embedded (a comment on it, a notification about it). */
export function presentIssue(view: IssueView, urls: Urls): IssueBody {
  const { issue, note } = view;
  return {
    id: issue.id,
    title: issue.title,
    is_done: issue.isDone,
    index: issue.index,
    created_at: issue.createdAt.toISOString(),
    updated_at: issue.updatedAt.toISOString(),
    position: issue.position,
    rate: Number(issue.rate),
    to_user: view.toUser ? presentUser(view.toUser, urls) : null,
    from_user: presentUser(view.fromUser, urls),
    note,
    label: issueLabel(issue),
    html_url: urls.issue(note.team.name, note.name, issue.index),
    can_manage: can('issue.manage', view.subject, { creatorId: view.fromUser.id }),
    tags: [...view.tags],
    description: issue.description,
    description_html: renderDescription(issue.description),
    via: presentVia(issue),
    model: 'issue',
  };
}
