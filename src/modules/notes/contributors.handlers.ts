// The contributors of a note: its creator, then everyone who wrote a version of its pages (or is its co-author).
import { defineOperation } from '../../http/handler.ts';
import { answerWith } from '../../http/answer.ts';
import { listPlace, pagination } from '../../http/pagination.ts';
import { User } from '../users/user.entity.ts';
import { presentUser } from '../users/user.presenter.ts';
import { contributorCount, contributorRows } from './notes.repository.ts';

export const contributorOperations = {
  /** The note's creator, then everyone who wrote (or co-wrote) a version of its pages, in the order of their first contribution. */
  listContributors: defineOperation('listContributors', { scope: 'note', action: 'note.read' }, async ({ query }, { note }, context) => {
    const page = pagination(query);
    const rows = await contributorRows(context.em, note.id, page.perPage, page.offset);
    const total = rows.length > 0 ? Number(rows[0]!.total) : await contributorCount(context.em, note.id);
    const list = listPlace(page, total);
    const users = rows.length === 0 ? [] : await context.em.find(User, { id: { $in: rows.map((row) => row.user_id) } });
    const byId = new Map(users.map((user) => [user.id, user]));
    return answerWith(rows.map((row) => presentUser(byId.get(row.user_id)!, context.urls)), { list });
  }),
};
