// Who may use a live document (live.server.ts): the caller a connection comes as (a bearer token, or a browser's
// session from a page of this site), whether it may read the page and write it, and the recheck every
// LIVE_RECHECK_MS that closes whoever lost that since.
import type { onAuthenticatePayload } from '@hocuspocus/server';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { WebSocket } from 'ws';
import { callerOfSecret, confirmToken } from '../../http/auth.ts';
import type { Caller } from '../access/caller.ts';
import { can } from '../access/policy.ts';
import { loadNoteScope, loadPageScope, subjectOf } from '../access/scope.ts';
import { DomainError } from '../errors.ts';
import type { createSessions } from '../sessions/sessions.ts';
import { CLOSE, refuse } from './protocol.ts';

export type LiveContext = {
  caller: Caller;
  team: string;
  note: string;
  noteId: number;
  pageId: number;
  writable: boolean;
  /** A browser's session (checked again by its cookie), or undefined for a token. */
  sessionSecret: string | undefined;
  socketId: string;
};

export type LiveSocket = { ws: WebSocket; context?: LiveContext };

type Sessions = ReturnType<typeof createSessions>;

/** Whether `caller` writes what it may edit: with a `write` token or a session, and not through an app that proposes. */
function writes(caller: Caller): boolean {
  return caller.tokenScope === 'write' && caller.clientWrites !== 'proposals';
}

export function liveAccess(orm: MikroORM, sessions: Sessions) {
  /** The connection's caller: its token (the provider's), else its session cookie with an Origin of this site. */
  async function callerOf(data: onAuthenticatePayload<LiveContext>): Promise<{ caller: Caller; sessionSecret?: string }> {
    const em = orm.em.fork();
    if (data.token !== '' && data.token !== undefined) {
      const caller = await callerOfSecret(em, data.token);
      if (!caller) throw refuse('the token is not valid or has expired');
      return { caller };
    }
    const cookie = data.requestHeaders.get('cookie') ?? undefined;
    const origin = data.requestHeaders.get('origin');
    const host = data.requestHeaders.get('host');
    if (!cookie) throw refuse('sign in first, or send a bearer token as the provider\'s token');
    if (!origin || !host || URL.canParse(origin) === false || new URL(origin).host !== host) {
      throw refuse('a browser session connects only from a page of this site (the Origin does not match)');
    }
    const session = await sessions.read({ headers: { cookie }, em } as never);
    if (!session) throw refuse('the session has ended: sign in again');
    return {
      caller: { user: session.user, tokenId: 0, tokenScope: 'write', tokenConfirmed: true, clientId: null, clientWrites: 'direct' },
      sessionSecret: cookie,
    };
  }

  /** Whether `caller` may read the page, and write it; a refusal (the page "not there") when it may not read it. */
  async function pageAccessOf(caller: Caller, team: string, note: string, pageId: number) {
    try {
      const scope = await loadPageScope(orm.em.fork(), caller, team, note, pageId);
      return { scope, writable: can('note.edit', subjectOf(scope)) && writes(caller) };
    } catch (error) {
      if (error instanceof DomainError) throw refuse(`page ${pageId} of ${team}/${note} is not there or not yours to read`);
      throw error;
    }
  }

  /** Whether `caller` may still edit the note (throws when it may not even read it). */
  async function noteWritable(caller: Caller, team: string, note: string): Promise<boolean> {
    const scope = await loadNoteScope(orm.em.fork(), caller, team, note);
    return can('note.edit', subjectOf(scope)) && writes(caller);
  }

  const credentialOf = (context: LiveContext) => (context.sessionSecret === undefined ? `token ${context.caller.tokenId}` : `session ${context.sessionSecret}`);

  /** Whether the connection's token (confirmed as the API confirms a cached one, auth.ts) or session still stands. */
  async function credentialHolds(context: LiveContext): Promise<boolean> {
    if (context.sessionSecret !== undefined) {
      return (await sessions.read({ headers: { cookie: context.sessionSecret }, em: orm.em.fork() } as never)) !== undefined;
    }
    if (context.caller.tokenId === 0) return true;
    return confirmToken(orm.em.fork(), { ...context.caller, tokenConfirmed: false }).then(() => true, () => false);
  }

  /**
   * Every connection's access checked again, and who lost it closed: one check of each credential (a token, a
   * session) and one of each credential's access to each note, one after the other, however many pages are open.
   */
  async function recheck(sockets: Iterable<LiveSocket>): Promise<void> {
    const groups = new Map<string, { context: LiveContext; members: { ws: WebSocket; context: LiveContext }[] }>();
    for (const { ws, context } of sockets) {
      if (!context) continue;
      const key = `${credentialOf(context)}\n${context.team}/${context.note}`;
      const group = groups.get(key) ?? { context, members: [] };
      group.members.push({ ws, context });
      groups.set(key, group);
    }
    const credentials = new Map<string, boolean>();
    for (const { context, members } of groups.values()) {
      const credential = credentialOf(context);
      if (!credentials.has(credential)) credentials.set(credential, await credentialHolds(context));
      if (!credentials.get(credential)) {
        for (const member of members) member.ws.close(CLOSE.forbidden, 'the token was revoked or the session ended');
        continue;
      }
      let writable: boolean;
      try {
        writable = await noteWritable(context.caller, context.team, context.note);
      } catch {
        for (const member of members) member.ws.close(CLOSE.forbidden, 'you may no longer read this page');
        continue;
      }
      for (const member of members) {
        if (!member.context.writable || writable) continue;
        member.context.writable = false;
        member.ws.close(CLOSE.forbidden, 'you may no longer edit this page');
      }
    }
  }

  return { callerOf, pageAccessOf, recheck };
}
