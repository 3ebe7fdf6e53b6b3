// Who is calling: the signed-in user and the token they came with. Authentication (src/http/auth.ts) makes it once
// per request; handlers and policies read it.
import type { TokenScope } from '../auth/token.entity.ts';
import type { AppWrites } from '../oauth/oauth.entity.ts';
import type { User } from '../users/user.entity.ts';
import type { Actor, Via } from '../events/domain-events.ts';

export type Caller = {
  /** The user, as read when the token was looked up (a snapshot: never pass it to an entity manager, use its id). */
  user: User;
  tokenId: number;
  tokenScope: TokenScope;
  /**
   * False when the token came from this process's short-lived token cache: the first statement the request runs
   * (its scope, or a check of its own) then confirms the token still exists, so a revoke made anywhere (another
   * process, the admin command line) takes effect at once.
   */
  tokenConfirmed: boolean;
  /** The OAuth app the token was issued to (its client's id); null for a personal token. */
  clientId: number | null;
  /** How that app writes: `proposals` sends its page writes to a fork and a request (requests/proposals.ts). */
  clientWrites: AppWrites;
  /** That app as what it writes is attributed to (`via`): its public client id and name; null for a personal token. */
  via?: Via | null;
  /**
   * Everyone else whose changes this caller's writes hold: a live document's save (src/modules/live/live-write.ts)
   * is made for the person who typed last, and names the others who typed into it on the versions it writes. Only a
   * caller made in this process carries it; authentication never sets it, so no HTTP client can.
   */
  coAuthorIds?: readonly number[];
};

/**
 * Who the change log and the subscribers say made a change: the user, and the app it came through; and for the
 * versions it writes, whoever else's changes it holds.
 */
export function actorOf(caller: Caller): Actor {
  const actor: Actor = { id: caller.user.id, username: caller.user.username, name: caller.user.name, clientId: caller.clientId, via: caller.via ?? null };
  return caller.coAuthorIds?.length ? { ...actor, coAuthorIds: caller.coAuthorIds } : actor;
}
