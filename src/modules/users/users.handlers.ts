import { sql } from '@mikro-orm/core';
import { notFound } from '../errors.ts';
import { defineOperation, readerOf } from '../../http/handler.ts';
import { answerWith } from '../../http/answer.ts';
import { findBudgeted } from '../../db/rows.ts';
import { listBudget, listPlace, pagination } from '../../http/pagination.ts';
import { Membership } from '../teams/team.entity.ts';
import { Note } from '../notes/note.entity.ts';
import { loadNoteViews, recentFirst } from '../notes/notes.loader.ts';
import { presentNote } from '../notes/note.presenter.ts';
import { NOTE_TEXT_BYTES } from '../notes/notes.repository.ts';
import { User } from './user.entity.ts';
import { presentUser } from './user.presenter.ts';
import { findUserByUsername } from './users.service.ts';

export const userOperations = {
  getMe: defineOperation('getMe', { scope: 'caller', action: 'signed-in' }, async (_input, { caller }, { urls }) => presentUser(caller.user, urls)),

  listUsers: defineOperation('listUsers', { scope: 'caller', action: 'signed-in' }, async ({ query }, _scope, context) => {
    const page = pagination(query);
    const [users, total] = await context.em.findAndCount(User, {}, { orderBy: { id: 'asc' }, limit: page.perPage, offset: page.offset });
    const list = listPlace(page, total);
    return answerWith(users.map((user) => presentUser(user, context.urls)), { list });
  }),

  getUser: defineOperation('getUser', { scope: 'caller', action: 'signed-in' }, async ({ path }, _scope, { em, urls }) => {
    const user = await findUserByUsername(em, path.username);
    if (!user) throw notFound('user');
    return presentUser(user, urls);
  }),

  /** Notes of the teams the user belongs to, that the caller may read. */
  listUserNotes: defineOperation('listUserNotes', { scope: 'caller', action: 'signed-in' }, async ({ path, query }, scope, context) => {
    const { em } = context;
    const caller = scope.caller.user;
    const user = await findUserByUsername(em, path.username);
    if (!user) throw notFound('user');
    const [theirs, mine] = await Promise.all([
      em.find(Membership, { user: user.id }, { fields: ['team'] }),
      em.find(Membership, { user: caller.id }, { fields: ['team'] }),
    ]);
    const theirTeams = theirs.map((membership) => membership.team.id);
    const myTeams = mine.map((membership) => membership.team.id);
    const { items: notes, total, page } = await findBudgeted(
      em,
      Note,
      { team: { $in: theirTeams }, $or: [{ isPrivate: false }, { team: { $in: myTeams } }] },
      { populate: ['team'], orderBy: recentFirst },
      NOTE_TEXT_BYTES,
      listBudget(context, query),
    );
    const list = listPlace(page, total);
    const views = await loadNoteViews(readerOf(context), notes);
    return answerWith(views.map((view) => presentNote(view, context.urls, 'read')), { list });
  }),

  listUsernames: defineOperation('listUsernames', { scope: 'caller', action: 'signed-in' }, async ({ query }, _scope, context) => {
    const page = pagination(query);
    const [users, total] = await context.em.findAndCount(User, {}, { fields: ['username'], orderBy: [{ [sql.ref('username_key')]: 'asc' }, { id: 'asc' }], limit: page.perPage, offset: page.offset });
    const list = listPlace(page, total);
    return answerWith(users.map((user) => user.username), { list });
  }),
};
