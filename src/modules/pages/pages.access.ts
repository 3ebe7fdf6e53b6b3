import type { EntityManager } from '@mikro-orm/postgresql';
import { notFound } from '../../http/errors.ts';
import { findReadableNote, type NoteAccess } from '../notes/notes.access.ts';
import { Page } from './page.entity.ts';

export type PageAccess = NoteAccess & { page: Page };

/** The page at /{team}/{note}/{page} as the caller may see it; a page of another note is answered like none. */
export async function findReadablePage(em: EntityManager, callerId: number, teamName: string, noteRef: string, pageId: number): Promise<PageAccess> {
  const access = await findReadableNote(em, callerId, teamName, noteRef);
  const page = Number.isSafeInteger(pageId) ? await em.findOne(Page, { id: pageId, note: access.note.id }) : null;
  if (!page) throw notFound('page');
  return { ...access, page };
}
