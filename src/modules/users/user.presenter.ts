import type { User as UserBody } from '../../../generated/client/types.gen.ts';
import type { Urls } from '../../http/urls.ts';
import type { User } from './user.entity.ts';

/** What presenting a user reads: a loaded User, or the same fields read straight from a row. */
export type UserFields = Pick<User, 'id' | 'username' | 'name' | 'lang' | 'receiveEmail' | 'keyboardShortcuts' | 'options' | 'createdAt' | 'updatedAt'>;

export function presentUser(user: UserFields, urls: Urls): UserBody {
  return {
    id: user.id,
    username: user.username,
    name: user.name,
    receive_email: user.receiveEmail,
    keyboard_shortcuts: user.keyboardShortcuts,
    // `options` appears only on users who have set some
    ...(user.options ? { options: { advanced_menu: user.options.advanced_menu ?? false } } : {}),
    html_url: urls.user(user.username),
    avatar_url: urls.userAvatar(user.id),
    lang: { code: user.lang === 'ja' ? 'ja' : 'en', model: 'lang' },
    created_at: user.createdAt.toISOString(),
    updated_at: user.updatedAt.toISOString(),
    model: 'user',
  };
}
