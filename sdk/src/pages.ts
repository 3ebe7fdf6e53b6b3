// Writing a page the way merge-on-write asks: send the version the change was made from (`base_version`), so a change
// made over an older version is merged with what others wrote since instead of overwriting it, and an overlap comes
// back as a conflict to resolve rather than a lost edit.
import { updatePage } from '../../generated/client/sdk.gen.ts';
import type { Page, PageUpdateInput } from '../../generated/client/types.gen.ts';
import type { NotesClient } from './client.ts';
import { NotesApiError, type ConflictData } from './errors.ts';

export type PageWrite =
  /** Written as a new version: `merged` says whether others' changes since the base were merged into it. */
  | { outcome: 'written' | 'merged'; page: Page }
  /** Not written: the change overlaps what was written since (`conflict`: the latest version, its content, the regions). */
  | { outcome: 'conflict'; conflict: ConflictData; error: NotesApiError };

/**
 * Writes `changes` to the page `read` (a page as the API answered it: getPage, listPages, an earlier write), based on
 * the version that was read. `on_conflict`: `merge` (default) merges or answers the conflict; `fail` writes only when
 * nothing was written since; `overwrite` writes whatever happened since.
 */
export async function updatePageFrom(
  client: NotesClient,
  read: Pick<Page, 'id' | 'version' | 'note'>,
  changes: Omit<PageUpdateInput['page'], 'base_version'>,
  options: { onConflict?: 'merge' | 'fail' | 'overwrite' } = {},
): Promise<PageWrite> {
  try {
    const { data } = await updatePage({
      client,
      path: { team: read.note.team.name, note: read.note.name, page: read.id },
      body: { page: { ...changes, base_version: read.version }, on_conflict: options.onConflict ?? 'merge' },
      throwOnError: true,
    });
    return { outcome: data.merge?.result === 'merged' ? 'merged' : 'written', page: data };
  } catch (error) {
    if (error instanceof NotesApiError && error.status === 409 && error.code === 'edit_conflict') {
      return { outcome: 'conflict', conflict: error.conflict ?? {}, error };
    }
    throw error;
  }
}
