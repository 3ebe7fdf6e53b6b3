// The note's page tree beside a page (its own view, history, versions and changes): the root pages, and down the
// page's ancestors each one's children, open, to the page itself (marked) and its children. It is read with the
// API's listPages (`parent=root`, then `parent=<ancestor>`: one operation per level, never the whole note, so the
// view stays small in a note of thousands of pages); a level with more pages than one list page holds ends with a
// link to the note's full tree. On a narrow screen the tree is a menu (a <details> closed by default) above the page,
// on a wide one it stands open beside it (web.css): no script either way.
import type { Page, PageAncestor, PageRelative } from '../../../../generated/client/types.gen.ts';
import { html, trusted, type Html, type Renderable } from '../html.ts';
import { atMoment } from './note.ts';
import { seg, type View } from './view.ts';

/** What the tree needs of the page shown: where it is, and its children when the caller already has them. */
export type TreePlace = { id: number; ancestors: readonly PageAncestor[]; children?: readonly PageRelative[] | undefined };

type Level = { pages: readonly { id: number; title: string; html_url: string }[]; more: boolean };

/** The tree around `place`, in a <nav> for the layout's side column. */
export async function pageTreeNav(view: View, team: string, note: string, place: TreePlace, at?: string): Promise<Html> {
  const { t } = view.locale;
  const base = `/${seg(team)}/${seg(note)}`;
  const moment = at === undefined ? {} : { at };
  const list = async (parent: string): Promise<Level> => {
    const answer = (await view.run('listPages', 'note', `${base}/pages`, { team, note }, { parent, page: 1, ...moment })).body;
    return { pages: answer.pages as Page[], more: !answer.last_page };
  };
  const opened = [...place.ancestors.map((ancestor) => ancestor.id), place.id];
  // the levels are independent reads: roots, then the children of each ancestor and of the page
  const levels = await Promise.all([
    list('root'),
    ...opened.map((id, index) => (index === opened.length - 1 && place.children !== undefined ? { pages: place.children, more: false } : list(String(id)))),
  ]);
  const noteUrl = view.services.urls.note(team, note);
  const branch = (depth: number): Html => {
    const level = levels[depth]!;
    const openId = opened[depth];
    return html`<ul>${level.pages.map((page) => {
      const current = page.id === place.id ? trusted(' aria-current="page"') : '';
      const below = page.id === openId && depth + 1 < levels.length && levels[depth + 1]!.pages.length > 0 ? branch(depth + 1) : '';
      return html`<li><a href="${atMoment(page.html_url, at)}"${current}>${page.title}</a>${below}</li>`;
    })}${level.more ? html`<li><a href="${atMoment(noteUrl, at)}">${t.allPages}</a></li>` : ''}</ul>`;
  };
  return html`<nav class="card tree side" aria-label="${t.pageTree}"><details class="tree-menu"><summary>${t.pages}</summary>${levels[0]!.pages.length === 0 ? html`<p class="muted">${t.nothing}</p>` : branch(0)}</details></nav>`;
}

/** The two columns of a page's views: the tree, then the view's own cards. */
export function besideTree(tree: Html, body: Renderable): Html {
  return html`<div class="layout">${tree}<div class="main-column">${body}</div></div>`;
}
