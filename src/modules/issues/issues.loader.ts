// Loading issues and what presenting them needs, in a fixed number of statements however many issues: their users
// come with them (joined), the notes they embed are presented once each (notes.loader.ts), and the tags of all of
// them in one statement. Also what other modules need to embed an issue (its comments, notifications about it).
import type { Reader } from '../../cache/memory.ts';
import type { Loaded } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Note as NoteBody } from '../../../generated/client/types.gen.ts';
import { notFound } from '../errors.ts';

import { shared } from '../../http/json.ts';
import type { Subject } from '../access/policy.ts';
import { presentNote } from '../notes/note.presenter.ts';
import { loadNoteViews } from '../notes/notes.loader.ts';
import { Issue } from './issue.entity.ts';
import type { IssueView } from './issue.presenter.ts';
import { issueTagRows } from './issues.repository.ts';

/** An issue with the relations its presentation reads; its `note` must be loaded with its team. */
export type LoadedIssue = Loaded<Issue, 'fromUser' | 'toUser'>;

const LARGEST_INDEX = 2_147_483_647;

/** The issue of a note with this index (its creator and assignee loaded), or null. */
export async function findIssueInNote(em: EntityManager, noteId: number, index: number): Promise<LoadedIssue | null> {
  if (!Number.isSafeInteger(index) || index < 1 || index > LARGEST_INDEX) return null;
  return em.findOne(Issue, { note: noteId, index }, { populate: ['fromUser', 'toUser'] });
}

/** As findIssueInNote, answering 404 when there is none. */
export async function requireIssueInNote(em: EntityManager, noteId: number, index: number): Promise<LoadedIssue> {
  const issue = await findIssueInNote(em, noteId, index);
  if (!issue) throw notFound('issue');
  return issue;
}

/** The tag names of each issue, in the order they were added: one statement for all of them. */
export async function tagsOfIssues(em: EntityManager, issueIds: readonly number[]): Promise<Map<number, string[]>> {
  const tags = new Map<number, string[]>();
  if (issueIds.length === 0) return tags;
  const rows = await issueTagRows(em, issueIds);
  for (const row of rows) {
    const list = tags.get(row.issue_id);
    if (list) list.push(row.name);
    else tags.set(row.issue_id, [row.name]);
  }
  return tags;
}

/**
 * Views of issues for the reader: each note presented once (`read`, shared by every issue that embeds it) with the
 * reader's role in its team, and every issue's tags. The issues' notes must be loaded with their teams (the scope's
 * note is; a list across notes populates `note.team`).
 */
export async function loadIssueViews(reader: Reader, issues: readonly LoadedIssue[]): Promise<IssueView[]> {
  if (issues.length === 0) return [];
  const notes = [...new Map(issues.map((issue) => [issue.note.id, issue.note])).values()];
  const noteViews = await loadNoteViews(reader, notes);
  const presented = new Map<number, { body: NoteBody; subject: Subject }>();
  for (const view of noteViews) {
    presented.set(view.note.id, {
      body: shared(presentNote(view, reader.urls, 'read')),
      subject: { role: view.team.role, callerId: reader.callerId },
    });
  }
  const tags = await tagsOfIssues(reader.em, issues.map((issue) => issue.id));
  return issues.map((issue) => {
    const note = presented.get(issue.note.id)!;
    return {
      issue,
      note: note.body,
      fromUser: issue.fromUser,
      toUser: issue.toUser ?? null,
      tags: tags.get(issue.id) ?? [],
      subject: note.subject,
    };
  });
}

export async function loadIssueView(reader: Reader, issue: LoadedIssue): Promise<IssueView> {
  const [view] = await loadIssueViews(reader, [issue]);
  return view!;
}
