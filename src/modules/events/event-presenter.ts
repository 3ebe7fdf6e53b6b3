// The change log's rows as the change stream and the webhooks send them (ChangeEvent, one vocabulary): what
// happened, who did it and through which app, where, and to what. Ids, names and version numbers, never content.
// Pure: what it shows of teams, notes and apps comes in `EventContext`, loaded for a whole batch at once
// (event-stream.repository.ts, eventContext), and who may read an event is decided here too (`mayRead`), by the
// policy's own rule for notes.
import type { ChangeEvent } from '../../../generated/client/types.gen.ts';
import type { Urls } from '../../http/urls.ts';
import { can } from '../access/policy.ts';
import type { ChangeRow } from './events.repository.ts';
import type { AppRow, NoteRow, TeamRow } from './event-stream.repository.ts';

export type EventType = ChangeEvent['type'];

/** Every type an event may have, as the document lists them. */
export const EVENT_TYPES: readonly EventType[] = [
  'note.created', 'note.updated', 'note.deleted',
  'page.created', 'page.updated', 'page.moved', 'page.deleted', 'page.restored',
  'comment.created', 'comment.deleted',
  'issue.created', 'issue.updated', 'issue.deleted',
  'request.created', 'request.opened', 'request.closed', 'request.merged',
  'attachment.created', 'attachment.deleted',
  'fork.created', 'fork.pulled',
  'member.added', 'member.changed', 'member.removed',
  'team.renamed',
];
// the list above is the document's enum, whole: a type added to one and not the other fails `tsc`
type Missing = Exclude<EventType, (typeof EVENT_TYPES)[number]>;
const everyTypeListed: [Missing] extends [never] ? true : Missing = true;
void everyTypeListed;

const known = new Set<string>(EVENT_TYPES);
export const isEventType = (type: string): type is EventType => known.has(type);

/** What a batch of events shows, by id, and who of the stream's listeners is in which team now. */
export type EventContext = {
  teams: ReadonlyMap<number, TeamRow>;
  notes: ReadonlyMap<number, NoteRow>;
  apps: ReadonlyMap<number, AppRow>;
  /** team id -> the listeners' user ids in it */
  members: ReadonlyMap<number, ReadonlySet<number>>;
};

export function eventContextOf(rows: { teams: TeamRow[]; notes: NoteRow[]; apps: AppRow[]; memberships: { team_id: number; user_id: number }[] }): EventContext {
  const members = new Map<number, Set<number>>();
  for (const { team_id: team, user_id: user } of rows.memberships) {
    let set = members.get(team);
    if (!set) members.set(team, (set = new Set()));
    set.add(user);
  }
  return {
    teams: new Map(rows.teams.map((team) => [team.id, team])),
    notes: new Map(rows.notes.map((note) => [note.id, note])),
    apps: new Map(rows.apps.map((app) => [app.id, app])),
    members,
  };
}

/** The ids a batch of changes needs looked up (eventContext). */
export function idsOf(changes: readonly ChangeRow[]): { teams: number[]; notes: number[]; apps: number[] } {
  const teams = new Set<number>();
  const notes = new Set<number>();
  const apps = new Set<number>();
  for (const change of changes) {
    if (change.team_id !== null) teams.add(change.team_id);
    if (change.note_id !== null) notes.add(change.note_id);
    if (change.client_id !== null) apps.add(change.client_id);
  }
  return { teams: [...teams], notes: [...notes], apps: [...apps] };
}

/** The type a change is sent as: a page update that only moved the page is `page.moved`. */
export function eventTypeOf(change: ChangeRow): EventType | undefined {
  if (change.type === 'page.updated') {
    const changed = change.payload.changed;
    if (Array.isArray(changed) && changed.length === 1 && changed[0] === 'parent') return 'page.moved';
  }
  return isEventType(change.type) ? change.type : undefined;
}

const numberOf = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);

/**
 * The event as sent, or undefined for a change no one outside the service hears of (a team's creation or deletion)
 * or whose team is gone.
 */
export function presentEvent(change: ChangeRow, context: EventContext, urls: Urls): ChangeEvent | undefined {
  const type = eventTypeOf(change);
  if (type === undefined || change.team_id === null) return undefined;
  const team = context.teams.get(change.team_id);
  if (!team) return undefined;
  const data = change.payload;
  const event: ChangeEvent = {
    id: Number(change.id),
    type,
    occurred_at: new Date(change.occurred_at).toISOString(),
    actor: { id: data.actor.id, username: data.actor.username },
    team: { id: team.id, name: team.name },
  };
  const app = change.client_id === null ? undefined : context.apps.get(change.client_id);
  if (app) event.via = { client_id: app.client_id, name: app.name };
  if (change.note_id !== null) {
    const note = context.notes.get(change.note_id);
    const slug = note ? note.slug ?? String(note.id) : typeof data.slug === 'string' ? data.slug : String(change.note_id);
    event.note = { id: change.note_id, slug, html_url: urls.note(team.name, slug) };
  }
  const pageId = numberOf(data.page_id);
  if (pageId !== undefined) {
    const version = numberOf(data.version);
    event.page = version === undefined ? { id: pageId } : { id: pageId, version };
  }
  const issueIndex = numberOf(data.issue_index);
  if (issueIndex !== undefined) event.issue = { index: issueIndex };
  const commentId = numberOf(data.comment_id);
  if (commentId !== undefined) event.comment = { id: commentId, on: data.on as 'note' | 'page' | 'issue' | 'request' };
  const attachmentId = numberOf(data.attachment_id);
  if (attachmentId !== undefined) event.attachment = { id: attachmentId };
  const requestIndex = numberOf(data.request_index);
  if (requestIndex !== undefined) event.request = { index: requestIndex };
  const fromNote = numberOf(data.from_note_id);
  if (fromNote !== undefined) event.from_note = { id: fromNote };
  const original = numberOf(data.original_note_id);
  if (original !== undefined) event.original_note = { id: original };
  if (type.startsWith('member.')) {
    const role = data.role;
    event.member = role === 'manager' || role === 'member' ? { id: numberOf(data.user_id)!, role } : { id: numberOf(data.user_id)! };
  }
  if (Array.isArray(data.changed) && type !== 'team.renamed') event.changed = data.changed as string[];
  return event;
}

/**
 * Whether `userId` may read the event now: an event of a note, whoever may read the note (policy.ts, `note.read`;
 * a note since deleted, by what it was when deleted); an event of a team, its members and the member it is about.
 */
export function mayRead(change: ChangeRow, userId: number, context: EventContext): boolean {
  const member = change.team_id !== null && context.members.get(change.team_id)?.has(userId) === true;
  const role = member ? 'member' : undefined;
  if (change.note_id !== null) {
    const note = context.notes.get(change.note_id);
    const isPrivate = note ? note.is_private : change.payload.private !== false;
    return can('note.read', { role, callerId: userId }, { isPrivate });
  }
  return member || change.payload.user_id === userId;
}
