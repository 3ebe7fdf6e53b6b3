// The MCP server (Model Context Protocol, Streamable HTTP, stateless: every POST is a session of its own), built on
// the official SDK's low-level Server. The service is an OAuth 2 resource server for it: a bearer token (personal,
// or issued through /oauth/*) is required, a 401 points at the protected resource metadata (RFC 9728), and a `read`
// token lists and calls only the tools that read.
// A tool runs its operation through the API itself: a request to this very server (the address this connection
// came in on) with the caller's token. So a tool is validated, authorized, limited and logged exactly as the API call
// it stands for, and there is no second path to the data.
import net from 'node:net';
import { Ajv, type ValidateFunction } from 'ajv';
import express, { type Request, type RequestHandler, type Response } from 'express';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema, ListResourcesRequestSchema, ListResourceTemplatesRequestSchema, ListToolsRequestSchema, McpError, ReadResourceRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { authenticate } from '../../http/auth.ts';
import { HttpError } from '../../http/errors.ts';
import type { AppServices } from '../../http/handler.ts';
import { asProblem, plainRouter, type Refusal } from '../../http/input-guard.ts';
import { loadOpenApiDocument } from '../../http/openapi.ts';
import { SCOPES } from '../oauth/scopes.ts';
import { buildTools, requestOf, type Tool } from './tools.ts';

export const MCP_PATH = '/mcp';
const METADATA_PATH = '/.well-known/oauth-protected-resource';
const PACKAGE_VERSION = '0.1.0';

const PAGE_SCHEME = 'notes:';
const PAGE_URI = /^notes:\/\/([^/?#]+)\/([^/?#]+)\/([1-9][0-9]{0,9})$/;
/** JSON-RPC's invalid params, and MCP's "resource not found". */
const INVALID_PARAMS = -32602;
const RESOURCE_NOT_FOUND = -32002;

/** What a tool's result text may hold before it is cut (the structured content keeps the whole answer). */
const RESULT_TEXT_CHARS = 256 * 1024;

type Prepared = Tool & { validate: ValidateFunction };

/** The request this tool call makes of the API, its answer read as JSON. */
async function callApi(base: string, authorization: string, method: string, path: string, body: unknown): Promise<{ status: number; json: unknown }> {
  const answer = await fetch(`${base}${path}`, {
    method,
    headers: { Authorization: authorization, Accept: 'application/json', ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await answer.text();
  let json: unknown = text;
  try {
    json = text === '' ? null : JSON.parse(text);
  } catch {
    // not JSON: kept as text
  }
  return { status: answer.status, json };
}

/** A tool's failure as the model reads it: the status, the problem's code and detail, and a conflict's regions. */
type Problem = { code?: string; detail?: string; title?: string; errors?: unknown; conflicts?: unknown };
const problemOf = (json: unknown) => (json && typeof json === 'object' ? json : {}) as Problem;

/** The first line of a failure: what happened, the problem's detail and code. */
function failureText(status: number, json: unknown): string {
  const problem = problemOf(json);
  const what = status === 404 ? 'not found (or not visible to this user)' : status === 403 ? 'not permitted' : status === 409 ? 'conflict' : `refused (${status})`;
  return `${what}: ${problem.detail ?? problem.title ?? String(json)}${problem.code ? ` [${problem.code}]` : ''}`;
}

function failure(status: number, json: unknown): CallToolResult {
  const problem = problemOf(json);
  const lines = [failureText(status, json)];
  if (problem.errors) lines.push(`errors: ${JSON.stringify(problem.errors)}`);
  if (problem.conflicts) lines.push(`conflicting regions: ${JSON.stringify(problem.conflicts)}`);
  return { isError: true, content: [{ type: 'text', text: lines.join('\n') }], ...(problem.conflicts ? { structuredContent: { status, code: problem.code, conflicts: problem.conflicts } } : {}) };
}

function success(results: unknown[]): CallToolResult {
  const last = results.length === 1 ? results[0] : { ...(results[0] as object), pages: results[1] };
  const structured = Array.isArray(last) ? { items: last } : (last as Record<string, unknown>);
  let text = JSON.stringify(last);
  // a write of an app that only proposes (`writes: proposals`) says so first, for the agent to tell its user
  const proposal = (last as { proposal?: { fork_id: number; request_index: number | null; request_html_url: string | null } } | null)?.proposal;
  if (proposal) {
    const page = (last as { id: number }).id;
    text = `Proposed, not applied: this app's changes go to a fork for people to review. The change is in page ${page} of the fork (note ${proposal.fork_id})${
      proposal.request_html_url ? `, carried by request #${proposal.request_index} on the original: ${proposal.request_html_url}` : ''}.\n${text}`;
  }
  if (text.length > RESULT_TEXT_CHARS) text = `${text.slice(0, RESULT_TEXT_CHARS)}… (cut at ${RESULT_TEXT_CHARS} characters; ask for fewer results)`;
  return { content: [{ type: 'text', text }], structuredContent: structured };
}

/** This server as the connection reached it (the API is called there, never at an address a header names). */
function selfBase(req: Request): string {
  const address = req.socket.localAddress ?? '127.0.0.1';
  const host = net.isIPv6(address) && !address.startsWith('::ffff:') ? `[${address}]` : address.replace(/^::ffff:/, '');
  return `http://${host}:${req.socket.localPort}`;
}

function mcpServer(tools: readonly Prepared[], req: Request): Server {
  const caller = req.caller!;
  const visible = tools.filter((tool) => !tool.writes || caller.tokenScope === 'write');
  const server = new Server({ name: 'notes', version: PACKAGE_VERSION }, { capabilities: { tools: {}, resources: {} } });
  // pages as resources a client attaches as context: notes://<team>/<note>/<page id>, read as get_page reads them
  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: [] }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [{ uriTemplate: `${PAGE_SCHEME}//{team}/{note}/{page}`, name: 'page', title: 'A page of a note', description: 'A page\'s content (HTML); team and note as list_notes gives them, page its id.', mimeType: 'text/html' }],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const uri = request.params.uri;
    const match = PAGE_URI.exec(uri);
    if (!match) throw new McpError(INVALID_PARAMS, `not a page resource: ${uri.slice(0, 200)} (notes://<team>/<note>/<page id>)`);
    const [team, note, page] = match.slice(1).map((part) => decodeURIComponent(part));
    const answer = await callApi(selfBase(req), req.get('authorization')!, 'GET', `/api/v1/${encodeURIComponent(team!)}/${encodeURIComponent(note!)}/${page}`, undefined);
    if (answer.status >= 400) throw new McpError(RESOURCE_NOT_FOUND, `${uri.slice(0, 200)}: ${failureText(answer.status, answer.json)}`);
    const body = answer.json as { title: string; content: string; version: number };
    return { contents: [{ uri, mimeType: 'text/html', text: body.content, _meta: { title: body.title, version: body.version } }] };
  });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: visible.map((tool) => ({ name: tool.name, title: tool.title, description: tool.description, inputSchema: tool.inputSchema, annotations: { readOnlyHint: !tool.writes } })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = visible.find((candidate) => candidate.name === request.params.name);
    if (!tool) {
      const exists = tools.some((candidate) => candidate.name === request.params.name);
      return { isError: true, content: [{ type: 'text', text: exists ? `${request.params.name} changes data: this token may only read (a write-scoped token is needed)` : `there is no tool ${request.params.name}` }] };
    }
    const args = request.params.arguments ?? {};
    if (!tool.validate(args)) {
      const detail = (tool.validate.errors ?? []).map((error) => `${error.instancePath || 'arguments'} ${error.message ?? 'is not valid'}`).join('; ');
      return { isError: true, content: [{ type: 'text', text: `invalid arguments: ${detail}` }] };
    }
    const results: unknown[] = [];
    for (const call of tool.calls) {
      const { method, path, body } = requestOf(loadOpenApiDocument(), call, args);
      const answer = await callApi(selfBase(req), req.get('authorization')!, method, path, body);
      if (answer.status >= 400) return failure(answer.status, answer.json);
      results.push(answer.json);
    }
    return success(results);
  });
  return server;
}

/**
 * The SDK's transport refuses (406) a request whose Accept does not name both `application/json` and
 * `text/event-stream`, as the MCP specification asks clients to send. This server answers every message with JSON
 * (`enableJsonResponse`) and never streams, so a client that takes JSON (`application/json`, `application/*`, `*\/*`,
 * or no Accept at all: plain curl and fetch) is answered too: its Accept is completed before the transport reads it.
 * A client that takes no JSON still gets the 406.
 */
function acceptJsonAnswers(req: Request): void {
  const accept = req.headers.accept;
  if (accept !== undefined && !/(^|,)\s*(application\/json|application\/\*|\*\/\*)\s*(;|,|$)/i.test(accept)) return;
  if (accept !== undefined && /text\/event-stream/i.test(accept) && /application\/json/i.test(accept)) return;
  const complete = 'application/json, text/event-stream';
  req.headers.accept = complete;
  // the transport reads the headers as the node adapter builds them, from the raw list
  const raw = req.rawHeaders;
  const at = raw.findIndex((name, index) => index % 2 === 0 && name.toLowerCase() === 'accept');
  if (at >= 0) raw[at + 1] = complete;
  else raw.push('Accept', complete);
}

export function mcpRoutes({ config, urls }: AppServices): express.Router {
  const resource = `${urls.base}${MCP_PATH}`;
  const metadataUrl = `${urls.base}${METADATA_PATH}${MCP_PATH}`;
  const ajv = new Ajv({ strict: false, allErrors: true });
  const tools: Prepared[] = buildTools(loadOpenApiDocument()).map((tool) => ({ ...tool, validate: ajv.compile(tool.inputSchema) }));

  // refusals as JSON-RPC errors, the transport's own format (the SDK answers its own refusals so); a 401 tells the
  // client where to find how to get a token (RFC 9728, section 5.1)
  const refuse: Refusal = (error, req, res) => {
    const headers = { ...error.headers };
    if (error.status === 401) {
      const reason = req.get('authorization') === undefined ? '' : ', error="invalid_token"';
      headers['WWW-Authenticate'] = `Bearer resource_metadata="${metadataUrl}"${reason}`;
    }
    // -32700 a body that is not JSON; -32600 any other refusal of the request; -32603 the server's own failure
    const code = error.code === 'malformed_body' ? -32700 : error.status >= 500 ? -32603 : -32600;
    const detail = error.errors?.length ? `${error.message}: ${error.errors.map((item) => `${item.pointer ?? item.parameter ?? ''} ${item.detail}`.trim()).join('; ')}` : error.message;
    res.status(error.status).set(headers).set('Cache-Control', 'no-store').json({ jsonrpc: '2.0', error: { code, message: detail || error.title, data: { status: error.status, code: error.code } }, id: null });
  };
  const bearer = authenticate({ cache: false, scopeByMethod: false });
  // only the Authorization header: a token in the URL of an MCP endpoint would end up in clients' logs
  const headerOnly: RequestHandler = (req, _res, next) => {
    if (req.get('authorization') === undefined) return next(new HttpError(401, 'unauthorized', 'a bearer token is required (Authorization: Bearer <token>)'));
    return bearer(req, _res, next);
  };
  const serve: RequestHandler = async (req: Request, res: Response) => {
    acceptJsonAnswers(req);
    const server = mcpServer(tools, req);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  };
  const metadata: RequestHandler = (_req, res) => {
    res.set('Cache-Control', 'public, max-age=3600').json({
      resource,
      authorization_servers: [urls.base],
      scopes_supported: SCOPES,
      bearer_methods_supported: ['header'],
      resource_name: 'Notes',
      resource_documentation: `${urls.base}/docs`,
    });
  };
  const router = express.Router();
  // every body is read as JSON whatever its type says (a form is a parse error, not something the SDK sees), up to
  // the API's body limit (LIMIT_REQUEST_BODY_BYTES: 413 past it)
  router.use(plainRouter({ refuse, bodies: [express.json({ limit: config.limits.requestBodyBytes, type: () => true })] }, [
    { path: MCP_PATH, POST: [headerOnly, serve], guardBody: false },
  ]));
  router.use(plainRouter({ refuse: asProblem }, [{ path: METADATA_PATH, GET: metadata }, { path: `${METADATA_PATH}${MCP_PATH}`, GET: metadata }]));
  return router;
}
