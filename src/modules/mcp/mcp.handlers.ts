// The operations of the document that the MCP routes serve (mcp.routes.ts: the SDK's transport and the RFC 9728
// metadata, outside /api/v1). Listed in the operation table so that every operation of the document has its place.
import { servedByRoute } from '../../http/handler.ts';

const routes = servedByRoute('src/modules/mcp/mcp.routes.ts');

export const mcpOperations = {
  mcpMessage: routes,
  oauthProtectedResource: routes,
  oauthProtectedResourceMcp: routes,
};
