// Everything OAuth serves outside /api/v1 (documented in the OpenAPI document under /oauth and /.well-known): the
// authorization endpoint with its sign-in and consent pages, the token and revocation endpoints, the metadata, and
// the dynamic registration of public apps (RFC 7591).
import express from 'express';
import type { AppServices } from '../../http/handler.ts';
import { createSessions } from '../sessions/sessions.ts';
import { authorizeRoutes } from './authorize.routes.ts';
import { registrationRoutes } from './registration.routes.ts';
import { signInLimits } from './sign-in-limits.ts';
import { tokenRoutes } from './token.routes.ts';

export function oauthRoutes({ config, urls }: AppServices): express.Router {
  const settings = config.oauth;
  const sessions = createSessions({ secure: config.publicUrl.startsWith('https:') });
  const limits = signInLimits(settings);
  const router = express.Router();
  const bodyLimit = config.limits.requestBodyBytes;
  router.use(authorizeRoutes({ settings, sessions, limits, bodyLimit }));
  router.use(tokenRoutes({ settings, limits, urls, bodyLimit }));
  router.use(registrationRoutes({ settings, bodyLimit }));
  return router;
}
