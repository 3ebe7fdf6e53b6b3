// The MCP server's tools: each is one operation of the API (or two, for get_note), named and described for a model,
// its input schema derived from the operation's parameters and body fields (schemas.ts). A `read` token sees only
// the tools that read.
import type { OpenApiDocument } from '../../http/openapi.ts';
import { findOperation, inputSchema, toolArguments, type ArgumentNames, type ToolArgument } from './schemas.ts';

/** One call of the API a tool makes: the operation, and its arguments by name. */
export type ToolCall = { operationId: string; arguments: ToolArgument[] };

export type Tool = {
  name: string;
  title: string;
  description: string;
  /** A tool that changes something: listed only for a `write` token. */
  writes: boolean;
  /** The operations it calls, in order; the answer of the last is the tool's result, the earlier ones are kept beside it. */
  calls: ToolCall[];
  inputSchema: ReturnType<typeof inputSchema>;
};

const NOTE = ['team', 'note'] as const;
const PAGE = ['team', 'note', 'page'] as const;
const LIST = ['page', 'per_page'] as const;

type Spec = Omit<Tool, 'calls' | 'inputSchema'> & { calls: (ArgumentNames & { operationId: string })[] };
/** Pagination of a list under a page, whose `page` is the page's id. */
const PAGED = { rename: { 'query:page': 'results_page' } } as const;

const SPECS: Spec[] = [
  {
    name: 'search', title: 'Search notes and pages', writes: false,
    description: 'Full-text search over the notes, pages, issues and comments the user may read (Japanese included: words are matched without spaces). Returns matching notes, best first, each with the matches in it (page ids, snippets with <mark>).',
    calls: [{ operationId: 'searchNotes', parameters: ['q', 'type', 'note_id', 'order', ...LIST] }],
  },
  {
    name: 'list_notes', title: 'List notes', writes: false,
    description: 'The notes the user may read, newest first; `team` narrows to one team. Each note has `team` and `slug`, which the other tools take as `team` and `note`.',
    calls: [{ operationId: 'listNotes', parameters: ['team', ...LIST] }],
  },
  {
    name: 'get_note', title: 'Get a note with its page tree', writes: false,
    description: 'A note (title, description, counts) and its pages as a tree (id, title, parent, position; no content). Read a page\'s content with get_page.',
    calls: [{ operationId: 'getNote', parameters: [...NOTE] }, { operationId: 'listPages', parameters: [...NOTE] }],
  },
  {
    name: 'get_page', title: 'Get a page', writes: false,
    description: 'A page with its content (HTML) and `version`: pass that version as `base_version` to update_page, so a change made meanwhile is merged, not overwritten.',
    calls: [{ operationId: 'getPage', parameters: [...PAGE] }],
  },
  {
    name: 'list_page_versions', title: 'List a page\'s versions', writes: false,
    description: 'The versions of a page, newest first: each with its id, number, author, time and diff against the one before.',
    calls: [{ operationId: 'listPageVersions', parameters: [...PAGE, ...LIST], ...PAGED }],
  },
  {
    name: 'compare_versions', title: 'Compare two versions of a page', writes: false,
    description: 'The diff between two versions of a page (`a` older, `b` newer: version ids from list_page_versions); without them, the last change.',
    calls: [{ operationId: 'diffPageVersions', parameters: [...PAGE, 'a', 'b'] }],
  },
  {
    name: 'list_issues', title: 'List a note\'s issues', writes: false,
    description: 'The issues of a note; `state` is open (default) or closed.',
    calls: [{ operationId: 'listIssues', parameters: [...NOTE, 'state', ...LIST] }],
  },
  {
    name: 'get_request', title: 'Get a change request', writes: false,
    description: 'A request to merge a fork\'s changes into its original: its state, pages and, per page, whether it merges cleanly or conflicts.',
    calls: [{ operationId: 'getRequest', parameters: [...NOTE, 'index'] }],
  },
  {
    name: 'list_request_comments', title: 'Read a request\'s review comments', writes: false,
    description: 'The comments on a request (`team`/`note` name the original note), oldest first: what reviewers asked for before merging it.',
    calls: [{ operationId: 'listRequestComments', parameters: [...NOTE, 'index', ...LIST] }],
  },
  {
    name: 'create_page', title: 'Create a page', writes: true,
    description: 'Adds a page to a note: a title, its content (HTML) and optionally the id of its parent page.',
    calls: [{ operationId: 'createPage', parameters: [...NOTE], fields: ['title', 'content', 'parent'] }],
  },
  {
    name: 'update_page', title: 'Update a page', writes: true,
    description: 'Changes a page\'s title or content. `base_version` is required: the version you read (get_page). If the page changed since, the two changes are merged; where they overlap the tool reports a conflict with the regions (base, yours, theirs) and changes nothing.',
    calls: [{ operationId: 'updatePage', parameters: [...PAGE], fields: ['base_version', 'title', 'content'], required: ['base_version'] }],
  },
  {
    name: 'create_issue', title: 'Open an issue', writes: true,
    description: 'Opens an issue on a note: a title and a description (Markdown-free text or HTML).',
    calls: [{ operationId: 'createIssue', parameters: [...NOTE], fields: ['title', 'description'] }],
  },
  {
    name: 'add_comment', title: 'Comment on a page', writes: true,
    description: 'Adds a comment to a page; @username mentions notify the user.',
    calls: [{ operationId: 'createPageComment', parameters: [...PAGE], fields: ['comment'] }],
  },
  {
    name: 'comment_on_request', title: 'Comment on a request', writes: true,
    description: 'Adds a comment to a request\'s review (`team`/`note` name the original note, `index` the request): to answer a reviewer or say what changed; @username mentions notify the user.',
    calls: [{ operationId: 'createRequestComment', parameters: [...NOTE, 'index'], fields: ['comment'] }],
  },
  {
    name: 'fork_note', title: 'Fork a note', writes: true,
    description: 'Copies a note (with its pages) into a team where the user may write, to change it there and propose the changes back with propose_changes.',
    calls: [{ operationId: 'createFork', parameters: [...NOTE], top: ['title', 'team'], rename: { 'body:team': 'into_team' } }],
  },
  {
    name: 'propose_changes', title: 'Propose a fork\'s changes', writes: true,
    description: 'Opens a request on the original of a fork (`team`/`note` name the fork) with the fork\'s changed pages: `page_versions` are the fork\'s page version ids to propose.',
    calls: [{ operationId: 'createRequest', parameters: [...NOTE], top: ['page_versions', 'deleted_pages', 'description'] }],
  },
  {
    name: 'merge_request', title: 'Merge a request', writes: true,
    description: 'Merges a request into its note (managers of the note only). Where pages conflict, `resolutions` choose per region (get_request shows them).',
    calls: [{ operationId: 'mergeRequest', parameters: [...NOTE, 'index'], top: ['expected_head_versions', 'resolutions'] }],
  },
];

/** The tools, with their schemas derived from `document`. */
export function buildTools(document: OpenApiDocument): Tool[] {
  return SPECS.map((spec) => {
    const calls = spec.calls.map((call) => ({ operationId: call.operationId, arguments: toolArguments(document, call.operationId, call) }));
    const byName = new Map<string, ToolArgument>();
    for (const call of calls) for (const argument of call.arguments) if (!byName.has(argument.name)) byName.set(argument.name, argument);
    return { ...spec, calls, inputSchema: inputSchema([...byName.values()]) };
  });
}

/** The HTTP request of one call: method, path (parameters filled in) with its query, and the JSON body. */
export function requestOf(document: OpenApiDocument, call: ToolCall, args: Record<string, unknown>): { method: string; path: string; body: unknown } {
  const operation = findOperation(document, call.operationId);
  let path = operation.path;
  const query = new URLSearchParams();
  const body: Record<string, unknown> = {};
  for (const argument of call.arguments) {
    const value = args[argument.name];
    if (value === undefined) continue;
    if (argument.source.in === 'path') path = path.replace(`{${argument.source.name}}`, encodeURIComponent(String(value)));
    else if (argument.source.in === 'query') query.set(argument.source.name, String(value));
    else if (argument.source.in === 'body' && argument.source.resource) ((body[argument.source.resource] ??= {}) as Record<string, unknown>)[argument.source.field] = value;
    else if (argument.source.in === 'body') body[argument.source.field] = value;
  }
  const search = query.toString();
  return { method: operation.method, path: search ? `${path}?${search}` : path, body: operation.method === 'GET' ? undefined : body };
}
