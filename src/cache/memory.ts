// What this process keeps in memory between requests, in one place: every cache, its share of CACHE_BYTES and how
// its entries are counted. Per app: two apps in one process never share it. What a cache keeps is declared where it
// is used (an operation's `cache`, src/cache/caching.ts; the loaders of team members and page orders), with tags
// made by tags.ts; the change feed drops what a change shows.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ChangeFeed } from '../db/change-feed.ts';
import type { Urls } from '../http/urls.ts';
import type { TreeThen } from '../modules/pages/history.ts';
import type { TeamMembers } from '../modules/teams/team-members.ts';
import { FeedCache } from './feed-cache.ts';
import { PageViewCache } from './page-views.ts';

/** A hot read: an answer kept whole, as sent (a page, as getPage answers it to one token). */
export type HotRead = { body: Buffer; etag: string };
export type HotReads = FeedCache<HotRead>;

/** The key of a hot read: the token it was answered to and the path it answers. */
export function hotReadKey(tokenId: number, path: string): string {
  return `${tokenId} ${path}`;
}

export type Memory = {
  /** Presented page views, per role, while the scope's stamp says nothing they show changed (page-views.ts). */
  pageViews: PageViewCache;
  /** Whole answers as sent, per token and path (served before routing: src/http/hot-reads.ts). */
  hot: HotReads;
  /** The presented members of teams (teams.loader.ts). */
  teamMembers: FeedCache<TeamMembers>;
  /** Every note's page ids in tree order (tree.ts). */
  treeOrders: FeedCache<readonly number[]>;
  /** Notes' trees at past moments, per note and moment (history.ts): a client reading a note then reads it page by page. */
  treesThen: FeedCache<TreeThen>;
};

/**
 * An upper bound of what a team's kept members hold: each presented user (an object of a dozen fields and its
 * strings) and its share of the lists' JSON, kept beside them as text and as bytes (json.ts); the names count again
 * in each of those.
 */
function teamMembersBytes(members: TeamMembers): number {
  let bytes = 256;
  for (const user of [...members.managers, ...members.members]) bytes += 1600 + 8 * (user.username.length + user.name.length);
  return bytes;
}

/** An upper bound of what a tree then holds (history.ts). */
function treeThenBytes(tree: TreeThen): number {
  let bytes = 256;
  for (const page of tree.pages.values()) bytes += 500 + 2 * page.title.length;
  return bytes;
}

/**
 * The caches, sharing `cacheBytes` (CACHE_BYTES): half for page views, a quarter for hot reads (mostly the very bytes
 * of the views they answer with), an eighth for the members of teams, a sixteenth each for the page orders of notes
 * and their trees at past moments.
 */
export function createMemory(changes: ChangeFeed, cacheBytes: number): Memory {
  const hotBytes = cacheBytes / 4;
  return {
    pageViews: new PageViewCache(cacheBytes / 2),
    hot: new FeedCache<HotRead>(changes, { entries: 10_000, bytes: hotBytes, largest: hotBytes / 16, sizeOf: (entry) => entry.body.length + 2 * entry.etag.length }),
    // a large team is read by every request about its notes: one may take half the share
    teamMembers: new FeedCache<TeamMembers>(changes, { entries: 10_000, bytes: cacheBytes / 8, largest: cacheBytes / 16, sizeOf: teamMembersBytes }),
    // a whole note's order is one entry, so one may take a quarter of the share (a note of many thousands of pages)
    treeOrders: new FeedCache<readonly number[]>(changes, { entries: 1000, bytes: cacheBytes / 16, largest: cacheBytes / 64, sizeOf: (ids) => 64 + 8 * ids.length }),
    // a page then is an object of ten fields with its title, in a map and a list of siblings; one note may take the
    // whole share (1 MiB of the default CACHE_BYTES holds a tree of about 2,000 pages)
    treesThen: new FeedCache<TreeThen>(changes, { entries: 200, bytes: cacheBytes / 16, largest: cacheBytes / 16, sizeOf: treeThenBytes }),
  };
}

/**
 * What the loaders need: where to read, how to link, what is kept in memory, and for whom. `fresh`: read everything
 * from the database (a request that writes presents what it wrote, before the change feed has been heard).
 */
export type Reader = { em: EntityManager; urls: Urls; memory: Memory; callerId: number; fresh: boolean };
