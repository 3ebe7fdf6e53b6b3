import { AttachmentSchema } from '../modules/attachments/attachment.entity.ts';
import { TokenSchema } from '../modules/auth/token.entity.ts';
import { CommentSchema } from '../modules/comments/comment.entity.ts';
import { IssueSchema, TagSchema } from '../modules/issues/issue.entity.ts';
import { LogSchema } from '../modules/logs/log.entity.ts';
import { NoteSchema } from '../modules/notes/note.entity.ts';
import { AuthorizationCodeSchema, OAuthClientSchema, OAuthGrantSchema, RefreshTokenSchema } from '../modules/oauth/oauth.entity.ts';
import { NotificationSchema } from '../modules/notifications/notification.entity.ts';
import { PageSchema, PageVersionSchema } from '../modules/pages/page.entity.ts';
import { MergeRequestPageSchema, MergeRequestSchema } from '../modules/requests/merge-request.entity.ts';
import { MembershipSchema, TeamSchema } from '../modules/teams/team.entity.ts';
import { BrowserSessionSchema } from '../modules/sessions/session.entity.ts';
import { UserSchema } from '../modules/users/user.entity.ts';
import { WebhookDeliverySchema, WebhookSchema } from '../modules/webhooks/webhook.entity.ts';

export const entities = [
  UserSchema,
  TokenSchema,
  TeamSchema,
  MembershipSchema,
  NoteSchema,
  PageSchema,
  PageVersionSchema,
  TagSchema,
  IssueSchema,
  CommentSchema,
  AttachmentSchema,
  MergeRequestSchema,
  MergeRequestPageSchema,
  NotificationSchema,
  LogSchema,
  OAuthClientSchema,
  AuthorizationCodeSchema,
  RefreshTokenSchema,
  OAuthGrantSchema,
  BrowserSessionSchema,
  WebhookSchema,
  WebhookDeliverySchema,
];
