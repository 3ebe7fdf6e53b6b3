// The notes service's SDK: every operation of the API document (generated, in generated/client: never edited here),
// and the hand-written helpers beside it (this folder): createClient, errors, paginate, events, verifyWebhook,
// updatePageFrom and the OAuth helpers for command-line apps. sdk/README.md shows each.
export * from '../../generated/client/sdk.gen.ts';
export type * from '../../generated/client/types.gen.ts';
export { createClient, type NotesClient, type NotesClientOptions, type TokenSource } from './client.ts';
export { NotesApiError, type ConflictData, type ProblemCode } from './errors.ts';
export { paginate, nextLink } from './paginate.ts';
export { events, type EventsOptions, type StreamEvent } from './events.ts';
export { verifyWebhook, WebhookVerificationError } from './webhooks.ts';
export { updatePageFrom, type PageWrite } from './pages.ts';
export { authorizeWithLoopback, pkce, refreshingToken, tokenRequest, type LoopbackOptions, type OAuthTokens } from './oauth.ts';
