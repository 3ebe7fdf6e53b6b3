// The version writer: the only place a page version is written. A page's row is locked before it changes, so
// concurrent writers queue on it: none is lost, each gets its own version index from the page's counter, and an
// If-Match check sees the page as it is when the write happens.
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { currentTime } from '../../db/timestamps.ts';
import { preconditionFailed } from '../errors.ts';
import type { Actor } from '../events/domain-events.ts';
import { renderDiff } from './diff.ts';
import { Page, PageVersion } from './page.entity.ts';
import { pageEtag } from './page.presenter.ts';

/** Locks the page's row for the rest of the transaction and reads it as it is now. */
export async function lockPage(em: EntityManager, pageId: number): Promise<Page> {
  return em.findOneOrFail(Page, pageId, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
}

/** The entity tags an If-Match header names (a weak one as its opaque tag); undefined when it names `*` (any). */
export function etagsNamed(ifMatch: string): string[] | undefined {
  const named: string[] = [];
  for (const candidate of ifMatch.split(',')) {
    const value = candidate.trim().replace(/^W\//, '');
    if (value === '*') return undefined;
    named.push(value);
  }
  return named;
}

/** 412 unless `ifMatch` (absent: no condition) names the page's current ETag, or is `*`. */
export function checkIfMatch(page: Page, ifMatch: string | undefined): void {
  if (ifMatch === undefined) return;
  const named = etagsNamed(ifMatch);
  if (named !== undefined && !named.includes(pageEtag(page))) throw preconditionFailed('the page changed since the ETag given in If-Match; fetch it again');
}

/**
 * The co-authors a version of `author`'s names: the others whose changes it holds (Actor.coAuthorIds, a live save),
 * each once, in the order given, never the author; empty for every other write.
 */
export function coAuthorsOf(author: Actor): number[] {
  const named = new Set<number>();
  for (const id of author.coAuthorIds ?? []) if (Number.isSafeInteger(id) && id > 0 && id !== author.id) named.add(id);
  return [...named];
}

/**
 * Records the page's current title and content as its next version, `author`'s with their co-authors; `origin`: a
 * merge's request and the fork version the content came from. Its diff from `previousContent` is made when it is
 * first read (version-diffs.ts), from the version before it, whose content that is; a page's first version whose
 * page had content before (a fork's copy, which has no versions of its own) gets its diff now, as nothing later
 * could tell what it was diffed from.
 */
export function recordVersion(
  em: EntityManager,
  page: Page,
  author: Actor,
  previousContent: string,
  origin?: { requestId?: number | null; fromVersionId?: number | null; mergedFromBase?: number | null },
): PageVersion {
  const diff = page.versionSequence === 0 && previousContent !== '' ? renderDiff(previousContent, page.content).html : null;
  page.versionSequence += 1;
  return em.create(PageVersion, {
    page,
    note: page.note,
    index: page.versionSequence,
    title: page.title,
    content: page.content,
    diff,
    user: author.id,
    requestId: origin?.requestId ?? null,
    fromVersionId: origin?.fromVersionId ?? null,
    mergedFromBase: origin?.mergedFromBase ?? null,
    viaClient: author.via?.clientId ?? null,
    viaApp: author.via?.name ?? null,
    coAuthorIds: coAuthorsOf(author),
  });
}

/**
 * Sets the title and content given (of a locked page); a version, and what changed, when either changed.
 * `mergedFromBase`: the text is a merge-on-write over that base version (pages.service.ts).
 */
export function writeContent(
  em: EntityManager,
  page: Page,
  author: Actor,
  changes: { title?: string | undefined; content?: string | undefined },
  mergedFromBase?: number,
): { version: PageVersion; changed: ('title' | 'content')[] } | undefined {
  const previousContent = page.content;
  const changed: ('title' | 'content')[] = [];
  if (changes.title !== undefined && changes.title !== page.title) {
    page.title = changes.title;
    changed.push('title');
  }
  if (changes.content !== undefined && changes.content !== page.content) {
    page.content = changes.content;
    changed.push('content');
  }
  if (changed.length === 0) return undefined;
  return { version: recordVersion(em, page, author, previousContent, mergedFromBase === undefined ? undefined : { mergedFromBase }), changed };
}

/** Marks a changed page: a new ETag, a new `updated_at`. */
export function touch(page: Page): void {
  page.lockVersion += 1;
  page.updatedAt = currentTime();
}
