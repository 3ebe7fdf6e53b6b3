// Flow f) MCP calls, in a loop: POST /mcp JSON-RPC as a client sends it (the server is stateless: every POST stands
// alone), as the member (write token) and the reader (read token): initialize, tools/list, tools/call of read tools
// (get_note, list_notes, search, list_page_versions) and of write tools (create_issue, add_comment). The member's calls must
// succeed; the reader's write must be refused as a tool error, and the outsider's read of the private note must be a
// tool error too (not found) - never a protocol error, never a 5xx.
import { isShed, sleep } from './traffic.ts';
import { Flow } from './flow.ts';
import type { Actor } from './world.ts';

const MAX_ROUNDS = 100_000;

type Reply = { result?: { isError?: boolean; tools?: { name: string }[]; serverInfo?: unknown; content?: { text?: string }[] }; error?: unknown };

export class McpFlow extends Flow {
  rounds = 0;
  calls = 0;
  private id = 0;

  /** One JSON-RPC request; its reply, or undefined when the answer was not 200 (recorded). */
  private async rpc(actor: Actor, method: string, params: Record<string, unknown>, what: string): Promise<Reply | undefined> {
    this.id += 1;
    this.calls += 1;
    const answer = await this.traffic.send(`mcp`, 'POST', '/mcp', {
      token: actor.token,
      headers: { Accept: 'application/json, text/event-stream' },
      json: { jsonrpc: '2.0', id: this.id, method, params },
    });
    if (!answer || answer.status >= 500 || isShed(answer)) return undefined;
    const reply = answer.body as Reply | undefined;
    if (answer.status !== 200 || !reply || reply.error !== undefined) {
      this.traffic.surprise('mcp', `${what} as ${actor.name}: ${method} expected a JSON-RPC result`, answer);
      return undefined;
    }
    return reply;
  }

  private async tool(actor: Actor, name: string, args: Record<string, unknown>, wantError: boolean): Promise<void> {
    const reply = await this.rpc(actor, 'tools/call', { name, arguments: args }, `tools/call ${name}`);
    if (reply && Boolean(reply.result?.isError) !== wantError) {
      this.traffic.surprise('mcp', `tools/call ${name} ${JSON.stringify(args).slice(0, 200)} as ${actor.name}: expected ${wantError ? 'a tool error' : 'a result'}, got ${JSON.stringify(reply.result?.content?.[0]?.text ?? reply.result).slice(0, 300)}`);
    }
  }

  async run(): Promise<void> {
    const { member, reader, outsider } = this.world;
    const page = this.world.pages.open;
    for (; this.rounds < MAX_ROUNDS && !this.deadline.over; this.rounds += 1) {
      for (const actor of [member, reader]) {
        const hello = await this.rpc(actor, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'soak', version: '1.0.0' } }, 'initialize');
        if (hello && !hello.result?.serverInfo) this.traffic.surprise('mcp', `initialize as ${actor.name}: no serverInfo in ${JSON.stringify(hello).slice(0, 200)}`);
        const listed = await this.rpc(actor, 'tools/list', {}, 'tools/list');
        const names = listed?.result?.tools?.map((tool) => tool.name) ?? [];
        if (listed && (!names.includes('get_note') || names.includes('create_issue') !== (actor === member))) {
          this.traffic.surprise('mcp', `tools/list as ${actor.name}: ${names.join(', ')}`);
        }
      }
      await this.tool(member, 'get_note', { team: 'soak', note: 'open' }, false);
      await this.tool(reader, 'get_note', { team: 'soak', note: 'secret' }, false);
      await this.tool(outsider, 'get_note', { team: 'soak', note: 'secret' }, true);
      await this.tool(member, ['list_notes', 'search', 'list_page_versions'][this.rounds % 3]!, [{ team: 'soak' }, { q: 'release' }, { team: 'soak', note: 'open', page }][this.rounds % 3]!, false);
      await this.tool(member, 'create_issue', { team: 'soak', note: 'open', title: `From MCP, round ${this.rounds}` }, false);
      await this.tool(member, 'add_comment', { team: 'soak', note: 'open', page, comment: `From MCP, round ${this.rounds}` }, false);
      await this.tool(reader, 'create_issue', { team: 'soak', note: 'open', title: 'Refused' }, true);
      // a client's pace, not a flood of writes: the other flows read what these make
      await sleep(200);
    }
  }
}
