// The forms of the browser views: a comment on a page, an issue or a request, and a request's decision (merge with a choice for
// each conflicting region, close, reopen). Each is a POST from a signed-in browser carrying the session's CSRF token
// (formAuth, web.context.ts), runs the API's own operation (runWrite: the same body schema, scope and authorization;
// a member's merge is the API's 403), and answers 303 back to the view it came from, or the view again with what
// went wrong. No script: radio buttons and text areas.
import type { Request as RequestBody } from '../../../../generated/client/types.gen.ts';
import { HttpError } from '../../../http/errors.ts';
import { toHttpError } from '../../../http/problem-details.ts';
import { DomainError, forbidden } from '../../errors.ts';
import { runWrite } from '../web.context.ts';
import { requestView, seenOf } from './work.ts';
import { seg, type View } from './view.ts';

type Form = Record<string, unknown>;
/** A form field's text, or undefined when absent or repeated. */
export const field = (form: Form, name: string): string | undefined => (typeof form[name] === 'string' ? (form[name] as string) : undefined);

/** `@name` in a comment's text: the users it mentions (and notifies), as the API's `mentions` takes them. */
export function mentionsIn(text: string): string[] {
  const names = new Map<string, string>();
  for (const match of text.matchAll(/(?<![\w@.])@([A-Za-z0-9][A-Za-z0-9_-]{0,38})/g)) names.set(match[1]!.toLowerCase(), match[1]!);
  return [...names.values()].slice(0, 50);
}

function commentBody(form: Form): { comment: { comment: string }; mentions: string[] } {
  const text = (field(form, 'comment') ?? '').replace(/\r\n/g, '\n').trim();
  if (text === '') throw new HttpError(400, 'validation_failed', 'the comment is empty', { errors: [{ pointer: '/comment/comment', detail: 'is empty' }] });
  return { comment: { comment: text }, mentions: mentionsIn(text) };
}

export async function commentOnPage(view: View, team: string, note: string, pageId: number): Promise<string> {
  const apiPath = `/api/v1/${seg(team)}/${seg(note)}/${pageId}/comments`;
  const created = await runWrite(view.services, view.req, view.res, 'createPageComment', 'page', 'POST', apiPath, { team, note, page: pageId }, commentBody(view.req.body as Form));
  return `${view.services.urls.page(team, note, pageId)}#comment-${created.body.id}`;
}

export async function commentOnIssue(view: View, team: string, note: string, index: number): Promise<string> {
  const apiPath = `/api/v1/${seg(team)}/${seg(note)}/issues/${index}/comments`;
  const created = await runWrite(view.services, view.req, view.res, 'createIssueComment', 'note', 'POST', apiPath, { team, note, index }, commentBody(view.req.body as Form));
  return `${view.services.urls.note(team, note)}/issues/${index}#comment-${created.body.id}`;
}

export async function commentOnRequest(view: View, team: string, note: string, index: number): Promise<string> {
  const apiPath = `/api/v1/${seg(team)}/${seg(note)}/requests/${index}/comments`;
  const created = await runWrite(view.services, view.req, view.res, 'createRequestComment', 'note', 'POST', apiPath, { team, note, index }, commentBody(view.req.body as Form));
  return `${view.services.urls.note(team, note)}/requests/${index}#comment-${created.body.id}`;
}

type Resolution = { page_id: number; take?: 'ours' | 'theirs'; regions?: ({ take: 'ours' | 'theirs' } | { content: string })[] };

/** A region's text as typed and sent back (CRLF from a browser), to compare with what its box came with. */
export const typedText = (text: string) => text.replace(/\r\n?/g, '\n');
const sameText = (a: string, b: string) => typedText(a).trim() === typedText(b).trim();

/**
 * The form's choices as mergeRequest's resolutions: `r[page][i]` ours | theirs | edit, `t[page][i]` the region's box,
 * `tree[page]`. The box comes with the original's text and the original chosen; a box whose text was changed is the
 * manager's text for that region, also where its choice was left as it came (a browser without script cannot tie the
 * two): typing is choosing. A changed box with the fork's text chosen is asked again rather than guessed, as is a
 * region without a choice.
 */
function resolutionsOf(request: RequestBody, form: Form, regionWord: string): { resolutions: Resolution[]; missing: string[]; unclear: string[] } {
  const byPage = new Map<number, Resolution>();
  const missing: string[] = [];
  const unclear: string[] = [];
  for (const page of request.pages) {
    for (const conflict of page.conflicts) {
      const resolution = byPage.get(conflict.page_id) ?? { page_id: conflict.page_id };
      byPage.set(conflict.page_id, resolution);
      if (conflict.kind === 'tree') {
        const side = field(form, `tree[${conflict.page_id}]`);
        if (side === 'ours' || side === 'theirs') resolution.take = side;
        else missing.push(`${page.path}: ${conflict.kind}`);
        continue;
      }
      resolution.regions = conflict.regions.map((region, index) => {
        const choice = field(form, `r[${conflict.page_id}][${index}]`);
        const text = field(form, `t[${conflict.page_id}][${index}]`);
        const typed = text !== undefined && !sameText(text, region.ours);
        const where = `${page.path}: ${regionWord} ${index + 1}`;
        if (choice === 'edit' || (typed && choice !== 'theirs')) return { content: typedText(text ?? '') };
        if (typed) unclear.push(where);
        else if (choice !== 'ours' && choice !== 'theirs') missing.push(where);
        return { take: choice === 'theirs' ? 'theirs' : 'ours' };
      });
    }
  }
  return { resolutions: [...byPage.values()], missing, unclear };
}

/** Where the decision went: the view to go to (303), or the request's view to show again (a stale form, 409; a decision to make again, 400) with its status. */
export type Decided = { redirect: string } | { again: Awaited<ReturnType<typeof requestView>>; status: number };

export async function decideRequest(view: View, team: string, note: string, index: number, action: 'merge' | 'close' | 'open'): Promise<Decided> {
  const apiPath = `/api/v1/${seg(team)}/${seg(note)}/requests/${index}`;
  const path = { team, note, index };
  const form = view.req.body as Form;
  const current = (await view.run('getRequest', 'note', `/${seg(team)}/${seg(note)}/requests/${index}`, path)).body;
  const again = async () => ({ again: await requestView(view, team, note, index, { stale: true }), status: 409 });
  // who may not decide is told so before anything else (the API's operation would answer the same 403)
  const author = current.user.username === view.req.caller!.user.username;
  if (!current.to_note.can_manage && (action === 'merge' || !author)) throw forbidden(`only a manager of ${current.to_note.team.name} may ${action === 'open' ? 'reopen' : action} this request`);
  const seen = await seenOf(view, current);
  if (field(form, 'seen') !== seen.token) return again();
  try {
    if (action === 'merge') {
      const { resolutions, missing, unclear } = resolutionsOf(current, form, view.locale.t.region);
      // nothing merged on a guess: the view again, with what to decide and the form as it was sent
      if (missing.length > 0 || unclear.length > 0) {
        const { t } = view.locale;
        const message = [missing.length > 0 ? t.chooseEveryRegion(missing.join('; ')) : '', unclear.length > 0 ? t.typedButTheirs(unclear.join('; ')) : ''].filter(Boolean).join(' ');
        return { again: await requestView(view, team, note, index, { asked: { message, sent: form } }), status: 400 };
      }
      // the fork's pages as the form saw them: a write of the fork between the check above and the merge's transaction
      // is refused there (409 version_conflict), not merged unseen
      const body = { expected_head_versions: seen.forkHeads, resolutions };
      await runWrite(view.services, view.req, view.res, 'mergeRequest', 'note', 'PUT', `${apiPath}/merge`, path, body);
    } else await runWrite(view.services, view.req, view.res, action === 'close' ? 'closeRequest' : 'openRequest', 'note', 'PUT', `${apiPath}/${action}`, path, undefined);
  } catch (error) {
    // the request moved between the reading above and the write: shown again as it is now
    const known = error instanceof DomainError || error instanceof HttpError ? toHttpError(error) : undefined;
    if (known?.status === 409 && ['merge_conflict', 'stale_resolution', 'version_conflict'].includes(known.code)) return again();
    throw error;
  }
  return { redirect: current.html_url };
}
