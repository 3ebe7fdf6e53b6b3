// The contributors of a note: its creator, then everyone who wrote a version of its pages.
import { defineOperation } from '../../http/handler.ts';
import { answerWith } from '../../http/answer.ts';
import { listPlace, pagination } from '../../http/pagination.ts';
import { User } from '../users/user.entity.ts';
import { presentUser } from '../users/user.presenter.ts';

export const contributorOperations = {
  /** The note's creator, then everyone who wrote a version of its pages, in the order of their first contribution. */
  listContributors: defineOperation('listContributors', { scope: 'note', action: 'note.read' }, async ({ query }, { note }, context) => {
    const page = pagination(query);
    const rows = await context.em.execute<{ user_id: number; total: string }[]>(
      `select user_id, count(*) over () as total from (
         select user_id, min(sort_key) as first from (
           select user_id, 0 as sort_key from notes where id = ?
           union all
           select user_id, id as sort_key from page_versions where note_id = ?
         ) contributions group by user_id
       ) firsts order by first, user_id limit ? offset ?`,
      [note.id, note.id, page.perPage, page.offset],
    );
    const total = rows.length > 0 ? Number(rows[0]!.total) : (await context.em.execute<{ n: string }[]>(
      'select count(distinct user_id) as n from (select user_id from notes where id = ? union all select user_id from page_versions where note_id = ?) c',
      [note.id, note.id],
    ))[0]!.n;
    const list = listPlace(page, Number(total));
    const users = rows.length === 0 ? [] : await context.em.find(User, { id: { $in: rows.map((row) => row.user_id) } });
    const byId = new Map(users.map((user) => [user.id, user]));
    return answerWith(rows.map((row) => presentUser(byId.get(row.user_id)!, context.urls)), { list });
  }),
};
