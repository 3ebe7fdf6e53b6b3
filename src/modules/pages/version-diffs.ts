// A version's diff (from the version before it) is made when it is first read, not when it is written, and kept
// (migration 0016): most diffs are never read, and a write should not pay for them. The version before holds the
// content the page had before this one (versions.writer.ts records every change of content as a version, and gives
// the rare first version of a page that had content without versions, a fork's copy, its diff at once).
import type { EntityManager } from '@mikro-orm/postgresql';
import { renderDiff } from './diff.ts';
import type { PageVersion } from './page.entity.ts';
import { keepDiffs, previousContents } from './pages.repository.ts';

/**
 * Fills in the diffs of the versions that have none yet (all of one page, as a history lists them): the contents
 * they are diffed from are read in one statement, where they are not among the versions given, and the diffs made
 * are kept in one more. Nothing is read or written when every diff is there.
 */
export async function withDiffs(em: EntityManager, pageId: number, versions: readonly PageVersion[]): Promise<void> {
  const missing = versions.filter((version) => version.diff === null || version.diff === undefined);
  if (missing.length === 0) return;
  const contents = new Map<number, string>(versions.map((version) => [version.index, version.content]));
  const unread = missing.map((version) => version.index - 1).filter((index) => index >= 1 && !contents.has(index));
  for (const [index, content] of await previousContents(em, pageId, unread)) contents.set(index, content);
  const made: { id: number; diff: string }[] = [];
  for (const version of missing) {
    const diff = renderDiff(contents.get(version.index - 1) ?? '', version.content).html;
    version.diff = diff;
    made.push({ id: version.id, diff });
  }
  await keepDiffs(em, made);
}
