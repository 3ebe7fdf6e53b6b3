// streamEvents: the change stream, live (server-sent events, event-hub.ts) or as a JSON page of the same events.
// The filters are loaded through the scopes every operation uses (a team or note the caller may not read: 404);
// whether the caller may read each event is decided when it is sent, not here.
import { PassThrough } from 'node:stream';
import type { ChangeEvent, TruncatedEvent } from '../../../generated/client/types.gen.ts';
import { answerWith } from '../../http/answer.ts';
import { HttpError } from '../../http/errors.ts';
import { defineOperation, type StreamAnswer } from '../../http/handler.ts';
import { loadNoteScope, loadTeamScope } from '../access/scope.ts';
import { storedTypes, type EventFilter } from './event-filter.ts';
import { eventContextOf, eventTypeOf, idsOf, isEventType, mayRead, presentEvent, type EventType } from './event-presenter.ts';
import { changesFor, eventContext, oldestChangeId } from './event-stream.repository.ts';

const PER_PAGE = 100;

function parseTypes(value: string | undefined): ReadonlySet<EventType> | null {
  if (value === undefined) return null;
  const types = value.split(',').map((type) => type.trim()).filter((type) => type !== '');
  const unknown = types.filter((type) => !isEventType(type));
  if (unknown.length > 0) {
    throw new HttpError(400, 'invalid_event_type', `not an event type: ${unknown.slice(0, 5).map((type) => JSON.stringify(type.slice(0, 40))).join(', ')}`, {
      errors: [{ parameter: 'types', detail: 'each type must be one of ChangeEvent.type' }],
    });
  }
  return types.length === 0 ? null : new Set(types as EventType[]);
}

/** Whether the client asked for the live stream: `format`, else an Accept that names text/event-stream. */
function wantsStream(format: string | undefined, accept: string | undefined): boolean {
  if (format !== undefined) return format === 'event-stream';
  return accept !== undefined && /(^|,)\s*text\/event-stream\s*(;|,|$)/i.test(accept);
}

export const eventOperations = {
  streamEvents: defineOperation('streamEvents', { scope: 'caller', action: 'signed-in' }, async ({ query, headers }, { caller }, context) => {
    const types = parseTypes(query.types);
    let teamId: number | null = null;
    let noteId: number | null = null;
    if (query.team !== undefined) teamId = (await loadTeamScope(context.em, caller, query.team)).team.id;
    if (query.note !== undefined) {
      const slash = query.note.indexOf('/');
      const scope = await loadNoteScope(context.em, caller, query.note.slice(0, slash), query.note.slice(slash + 1));
      if (teamId !== null && scope.team.id !== teamId) throw new HttpError(404, 'not_found', 'the note is not in that team');
      noteId = scope.note.id;
    }
    const filter: EventFilter = { teamId, noteId, types };
    const lastEventId = headers['Last-Event-ID'];
    const since = query.since ?? (lastEventId === undefined ? undefined : Number(lastEventId));
    let truncated: TruncatedEvent | undefined;
    if (since !== undefined) {
      const oldest = await oldestChangeId(context.em);
      if (since + 1 < oldest) truncated = { type: 'truncated', oldest_id: oldest };
    }

    if (wantsStream(query.format, context.request.get('accept'))) {
      const streamHeaders = { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' };
      // HEAD: the stream's headers, and no stream held open for a body that is never sent
      if (context.request.method === 'HEAD') return { kind: 'stream', status: 200, headers: streamHeaders, body: new PassThrough().end() } satisfies StreamAnswer;
      context.refuseWhenTight('a new change stream');
      const first = `retry: 2000\n\n${truncated ? `event: truncated\ndata: ${JSON.stringify(truncated)}\n\n` : ''}`;
      const out = await context.events.openStream({ userId: caller.user.id, tokenId: caller.tokenId, filter }, since, first);
      if (!out) {
        throw new HttpError(429, 'too_many_streams', `this token already holds ${context.config.events.streamsPerToken} open change streams here; close one first`, {
          headers: { 'Retry-After': String(context.config.events.heartbeatSeconds) },
        });
      }
      return { kind: 'stream', status: 200, headers: streamHeaders, body: out.body, direct: (res) => out.attach(res) } satisfies StreamAnswer;
    }

    // the JSON form: the events after `since` up to the safe bound, read in id order, those the caller may read
    // (a `truncated` item takes one place of the page, and the events go on from the oldest kept)
    const perPage = query.per_page ?? PER_PAGE;
    const limit = truncated ? perPage - 1 : perPage;
    const after = truncated ? truncated.oldest_id - 1 : since ?? 0;
    const upTo = (await context.events.safeBound()).bound ?? after;
    const changes = after < upTo && limit > 0
      ? await changesFor(context.em, { after, upTo, limit }, { teamId, noteId, types: storedTypes(types) })
      : [];
    const items: (ChangeEvent | TruncatedEvent)[] = truncated ? [truncated] : [];
    if (changes.length > 0) {
      const shown = eventContextOf(await eventContext(context.em, { ...idsOf(changes), users: [caller.user.id] }));
      for (const change of changes) {
        const type = eventTypeOf(change);
        if (type === undefined || (types !== null && !types.has(type)) || !mayRead(change, caller.user.id, shown)) continue;
        const event = presentEvent(change, shown, context.urls);
        if (event) items.push(event);
      }
    }
    // continue after the last change read, or (all of them read) after the bound: nothing below it can still come
    const next = limit === 0 ? after : changes.length === limit ? Number(changes[changes.length - 1]!.id) : Math.max(after, upTo);
    const url = new URL(`${context.urls.base}/api/v1/events`);
    url.searchParams.set('format', 'json');
    url.searchParams.set('since', String(next));
    if (query.per_page !== undefined) url.searchParams.set('per_page', String(perPage));
    if (query.team !== undefined) url.searchParams.set('team', query.team);
    if (query.note !== undefined) url.searchParams.set('note', query.note);
    if (query.types !== undefined) url.searchParams.set('types', query.types);
    return answerWith(items, { link: `<${url.toString()}>; rel="next"` });
  }),
};
