import { defineEntity, p } from '@mikro-orm/core';
import { createdAt, updatedAt } from '../../db/timestamps.ts';
import { Note } from '../notes/note.entity.ts';
import { User } from '../users/user.entity.ts';

export const PageSchema = defineEntity({
  name: 'Page',
  tableName: 'pages',
  properties: {
    id: p.integer().primary(),
    note: () => p.manyToOne(Note),
    parent: () => p.manyToOne(Page).nullable(),
    position: p.integer().default(0),
    title: p.string().length(255),
    content: p.text().default(''),
    // Bumped on every change; the page's ETag.
    lockVersion: p.integer().default(1),
    // Highest version index handed out for this page.
    versionSequence: p.integer().default(0),
    // In a fork: the page of the original it was copied from, and the original's version it was copied at.
    originPage: () => p.manyToOne(Page).nullable(),
    baseVersion: () => p.manyToOne(PageVersion).nullable(),
    // ... and where it sat in the original then: the original's parent page id, null at the top level.
    baseParentId: p.integer().nullable(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
});
export class Page extends PageSchema.class {}
PageSchema.setClass(Page);

export const PageVersionSchema = defineEntity({
  name: 'PageVersion',
  tableName: 'page_versions',
  properties: {
    id: p.integer().primary(),
    page: () => p.manyToOne(Page),
    note: () => p.manyToOne(Note),
    index: p.integer(),
    title: p.string().length(255),
    content: p.text(),
    // the diff from the previous version, computed on first read (version-diffs.ts); null until then
    diff: p.text().nullable(),
    user: () => p.manyToOne(User),
    // Written by a merge: the request it came from and the fork's version (ids only: no relation to load).
    requestId: p.integer().nullable(),
    fromVersionId: p.integer().nullable(),
    // Written by updatePage from an older base, merged three ways (pages.service.ts): that base's index.
    mergedFromBase: p.integer().nullable(),
    // Made through an app: its public client id and its name then (migration 0021); null otherwise.
    viaClient: p.string().length(64).nullable(),
    viaApp: p.string().length(255).nullable(),
    // Of an imported note: the author as the export named them, when no user of that name was here (migration 0023).
    importedAuthor: p.json<{ username: string; name: string }>().nullable(),
    // Everyone else whose changes the version holds (a live save), in order, never the author (migration 0027).
    coAuthorIds: p.array<number>(Number, String).columnType('int[]').default([]),
    createdAt: createdAt(),
  },
});
export class PageVersion extends PageVersionSchema.class {}
PageVersionSchema.setClass(PageVersion);
