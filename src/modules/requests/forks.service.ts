// Forking a note: the note row, then its whole page tree copied set-based (a fixed number of statements however many
// pages: INSERT ... SELECT, then one UPDATE that maps the parents through `origin_page_id`). Each fork page remembers
// its upstream page (`origin_page_id`) and the upstream version it was copied at (`base_version_id`). The copy writes
// no versions: a fork page's history starts with its first change there (whose diff is then base -> change), and
// the versions a request proposes are exactly those changes.
import type { EntityManager } from '@mikro-orm/postgresql';
import { currentTime } from '../../db/timestamps.ts';
import { recordEvent, type Actor } from '../events/events.ts';
import { Note } from '../notes/note.entity.ts';
import { Page } from '../pages/page.entity.ts';
import { recordVersion, touch } from '../pages/versions.writer.ts';
import type { Team } from '../teams/team.entity.ts';
import { budgetOf } from './merge/merge3.ts';
import { mergePage, type PageConflict, type PageText, type Resolution } from './merge/pages.ts';
import { mergeConflict } from './merge.service.ts';

export type ForkFields = { title?: string | null | undefined };

export async function createFork(em: EntityManager, actor: Actor, original: Note, originalTeam: Team, target: Team, fields: ForkFields): Promise<Note> {
  return em.transactional(async (tx) => {
    const now = currentTime();
    const fork = tx.create(Note, {
      team: target,
      user: actor.id,
      slug: null,
      title: fields.title || `Copy of ${original.title} (${originalTeam.name})`.slice(0, 255),
      description: original.description,
      isPrivate: original.isPrivate,
      isTimeTrack: original.isTimeTrack,
      forkedFrom: original.id,
      pulledAt: now,
      coverPageId: null,
    });
    await tx.flush();
    await copyPageTree(tx, original.id, original.coverPageId ?? null, fork, now);
    await recordEvent(tx, { type: 'fork.created', actor, note: fork, original });
    return fork;
  });
}

/**
 * Copies every page of `fromNoteId` into the fork: titles, content, order, parents and the cover. The base of a page
 * is the upstream page's latest version, or (an upstream page that never changed in a fork of a fork) the base that
 * page itself was copied at: the same content.
 */
async function copyPageTree(tx: EntityManager, fromNoteId: number, coverPageId: number | null, fork: Note, now: Date): Promise<void> {
  await tx.execute(
    `insert into pages (note_id, parent_id, position, title, content, lock_version, version_sequence, origin_page_id, base_version_id, created_at, updated_at)
     select ?, null, p.position, p.title, p.content, 1, 0, p.id, coalesce(latest.id, p.base_version_id), ?, ?
       from pages p left join page_versions latest on latest.page_id = p.id and latest.index = p.version_sequence
      where p.note_id = ? order by p.id`,
    [fork.id, now, now, fromNoteId],
  );
  await tx.execute(
    `update pages child set parent_id = parent_copy.id
       from pages origin, pages parent_copy
      where child.note_id = ? and origin.id = child.origin_page_id and origin.parent_id is not null
        and parent_copy.note_id = ? and parent_copy.origin_page_id = origin.parent_id`,
    [fork.id, fork.id],
  );
  if (coverPageId !== null) {
    const rows = await tx.execute<{ id: number }[]>('select id from pages where note_id = ? and origin_page_id = ?', [fork.id, coverPageId]);
    fork.coverPageId = rows[0]?.id ?? null;
  }
}

type PullRow = {
  id: number;
  f_title: string;
  f_content: string;
  b_title: string | null;
  b_content: string | null;
  u_title: string;
  u_content: string;
  latest_id: number;
};

/**
 * Brings the fork up to date with its original, three ways per page (ours: the fork, theirs: the original): a page
 * only the original changed is taken, a page both changed is merged, a page only the fork changed stays; changed
 * pages get a version in the fork, every page's base moves to the original's latest version, and pages created in
 * the original since the last pull are copied in. Conflicts left unresolved: 409 and nothing written. Answers how
 * many pages changed.
 */
export async function pullFork(
  em: EntityManager,
  actor: Actor,
  fork: Note,
  original: Note,
  resolutions: Map<number, Resolution>,
): Promise<number> {
  return em.transactional(async (tx) => {
    await tx.execute('select id from pages where note_id = ? and origin_page_id is not null order by id for update', [fork.id]);
    const rows = await tx.execute<PullRow[]>(
      `select fp.id, fp.title as f_title, fp.content as f_content, b.title as b_title, b.content as b_content,
              u.title as u_title, u.content as u_content, latest.id as latest_id
         from pages fp
         join pages u on u.id = fp.origin_page_id
         join page_versions latest on latest.page_id = u.id and latest.index = u.version_sequence
         left join page_versions b on b.id = fp.base_version_id
        where fp.note_id = ? and fp.base_version_id is distinct from latest.id
        order by fp.id`,
      [fork.id],
    );
    const budget = budgetOf();
    const results = new Map<number, PageText>();
    const conflicts: PageConflict[] = [];
    const bounded: { pageId: number; reason: string }[] = [];
    for (const row of rows) {
      const base = row.b_title === null ? null : { title: row.b_title, content: row.b_content ?? '' };
      const ours = { title: row.f_title, content: row.f_content };
      const merge = mergePage(row.id, base, ours, { title: row.u_title, content: row.u_content }, budget);
      const resolution = resolutions.get(row.id);
      const result = merge.status === 'clean' ? merge.result
        : merge.status === 'conflict' && resolution ? merge.resolve(resolution)
        : merge.status === 'unknown' && resolution && typeof resolution !== 'string' ? { title: ours.title, content: resolution.content }
        : undefined;
      if (result === undefined) {
        if (merge.status === 'conflict') conflicts.push(merge.conflict);
        if (merge.status === 'unknown') bounded.push({ pageId: row.id, reason: merge.reason });
      } else if (result !== null && (result.title !== ours.title || result.content !== ours.content)) {
        results.set(row.id, result);
      }
    }
    if (conflicts.length > 0 || bounded.length > 0) mergeConflict(conflicts, bounded);
    const changing = results.size === 0 ? [] : await tx.find(Page, { id: { $in: [...results.keys()] } });
    for (const page of changing) {
      const result = results.get(page.id)!;
      const previous = page.content;
      page.title = result.title;
      page.content = result.content;
      recordVersion(tx, page, actor, previous);
      touch(page);
    }
    const lastPulled = fork.pulledAt ?? fork.createdAt;
    fork.pulledAt = currentTime();
    await tx.flush();
    if (rows.length > 0) {
      await tx.execute(
        'update pages p set base_version_id = x.base from unnest(?::int[], ?::int[]) as x (id, base) where p.id = x.id',
        [`{${rows.map((row) => row.id).join(',')}}`, `{${rows.map((row) => row.latest_id).join(',')}}`],
      );
    }
    const added = await copyNewPages(tx, fork, original, lastPulled);
    await recordEvent(tx, { type: 'fork.pulled', actor, note: fork, original, pages: changing.length + added });
    return changing.length + added;
  });
}

/** Pages created in the original since the fork last pulled (and not in the fork): copied in, set-based. */
async function copyNewPages(tx: EntityManager, fork: Note, original: Note, since: Date): Promise<number> {
  const now = currentTime();
  const added = await tx.execute<{ id: number }[]>(
    `insert into pages (note_id, parent_id, position, title, content, lock_version, version_sequence, origin_page_id, base_version_id, created_at, updated_at)
     select ?, null, u.position, u.title, u.content, 1, 0, u.id, latest.id, ?, ?
       from pages u join page_versions latest on latest.page_id = u.id and latest.index = u.version_sequence
      where u.note_id = ? and u.created_at >= ?
        and not exists (select 1 from pages fp where fp.note_id = ? and fp.origin_page_id = u.id)
      order by u.id
     returning id`,
    [fork.id, now, now, original.id, since, fork.id],
  );
  if (added.length === 0) return 0;
  await tx.execute(
    `update pages child set parent_id = parent_copy.id
       from pages origin, pages parent_copy
      where child.id = any(?::int[]) and origin.id = child.origin_page_id and origin.parent_id is not null
        and parent_copy.note_id = ? and parent_copy.origin_page_id = origin.parent_id`,
    [`{${added.map((row) => row.id).join(',')}}`, fork.id],
  );
  return added.length;
}
