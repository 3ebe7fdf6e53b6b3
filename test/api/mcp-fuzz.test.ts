// Fuzzing the MCP tools' arguments: every tool, called by the SDK's client with valid arguments of which one is
// replaced by a hostile value (NUL, a lone surrogate, a huge string, a value of the wrong type, an unknown argument).
// Each call must come back as a tool result (never a protocol error, never a dropped connection), a refusal as a
// tool error, and no call may reach a 5xx of the API behind the tool.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { makeIssue, makePage } from '../support/factories.ts';
import { hostileStrings, wrongTypes } from '../support/hostile-values.ts';
import { makeScenario, type Scenario } from '../support/scenario.ts';

const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
const CALLS_PER_TOOL = 12;

let app: TestApp;
let s: Scenario<'open'>;
let client: Client;
let valid: Record<string, Record<string, unknown>>;

beforeAll(async () => {
  app = await startTestApp();
  s = await makeScenario(app, { notes: { open: {} } });
  const page = await makePage(app, s.notes.open, s.manager, { title: 'Fuzzed', content: '<p>x</p>' });
  await makeIssue(app, s.notes.open, s.manager, { title: 'Fuzzed issue' });
  const note = { team: s.team.name, note: s.notes.open.slug };
  const onPage = { ...note, page: page.id };
  valid = {
    search: { q: 'fuzzed' },
    list_notes: { team: s.team.name },
    get_note: note,
    get_page: onPage,
    list_page_versions: { ...onPage, per_page: 5 },
    compare_versions: onPage,
    list_issues: { ...note, state: 'open' },
    get_request: { ...note, index: 1 },
    list_request_comments: { ...note, index: 1 },
    create_page: { ...note, title: 'New', content: '<p>new</p>' },
    update_page: { ...onPage, base_version: page.version, content: '<p>y</p>' },
    create_issue: { ...note, title: 'Issue' },
    add_comment: { ...onPage, comment: 'hi' },
    comment_on_request: { ...note, index: 1, comment: 'hi' },
    fork_note: { ...note, into_team: s.team.name, title: 'Fork' },
    propose_changes: { ...note, page_versions: [1], description: 'd' },
    merge_request: { ...note, index: 1 },
  };
  client = new Client({ name: 'notes-fuzz', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${app.baseUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${s.manager.token}` } } }));
});

afterAll(async () => {
  await client.close();
  await app.close();
});

describe('MCP tools under hostile arguments', () => {
  it('every tool answers a tool result, refusals as tool errors, never a 5xx behind it', { timeout: 240_000 }, async () => {
    const tools = (await client.listTools()).tools;
    expect(tools.map((tool) => tool.name).sort()).toEqual(Object.keys(valid).sort());
    const huge = fc.constantFrom('x'.repeat(300_000), 'あ'.repeat(100_000), '9'.repeat(400));
    const hostile = fc.oneof(hostileStrings(huge), wrongTypes(null, -2_147_483_649, 2_147_483_648));
    let calls = 0;
    let refused = 0;
    const failures: string[] = [];
    for (const [index, tool] of tools.entries()) {
      const base = valid[tool.name]!;
      const names = [...Object.keys(tool.inputSchema.properties ?? {}), 'unknown_argument'];
      const cases = fc.sample(fc.tuple(fc.constantFrom(...names), hostile), { seed: SEED + index, numRuns: CALLS_PER_TOOL });
      for (const [name, value] of cases) {
        const args = { ...base, [name]: value };
        calls += 1;
        let result: CallToolResult;
        try {
          result = await client.callTool({ name: tool.name, arguments: args }) as CallToolResult;
        } catch (error) {
          failures.push(`${tool.name} ${name}: protocol error ${String(error).slice(0, 200)}`);
          continue;
        }
        const text = (result.content[0] as { text?: string } | undefined)?.text ?? '';
        if (result.isError) refused += 1;
        if (/refused \(5\d\d\)/.test(text)) failures.push(`${tool.name} ${name}: ${text.slice(0, 200)}`);
      }
    }
    console.log(`[mcp fuzz] seed ${SEED}: ${calls} tool calls over ${tools.length} tools, ${refused} refused as tool errors, ${failures.length} failures`);
    expect(failures).toEqual([]);
    expect(refused).toBeGreaterThan(calls / 2);
    // the server still answers
    expect((await client.callTool({ name: 'get_note', arguments: valid.get_note }) as CallToolResult).isError).toBeFalsy();
  });
});
