// Absolute URLs of everything the API links to, built from PUBLIC_URL. Each one is served (see modules/web and
// modules/avatars), so no link the API hands out answers 404.
export type Urls = ReturnType<typeof createUrls>;

export function createUrls(publicUrl: string) {
  const base = publicUrl.replace(/\/+$/, '');
  const segment = (value: string | number) => encodeURIComponent(String(value));
  return {
    base,
    docs: `${base}/docs`,
    user: (username: string) => `${base}/users/${segment(username)}`,
    userAvatar: (id: number) => `${base}/avatars/users/${id}.svg`,
    team: (name: string) => `${base}/teams/${segment(name)}`,
    teamAvatar: (id: number) => `${base}/avatars/teams/${id}.svg`,
    note: (team: string, note: string) => `${base}/${segment(team)}/${segment(note)}`,
    noteAvatar: (id: number) => `${base}/avatars/notes/${id}.svg`,
    page: (team: string, note: string, pageId: number) => `${base}/${segment(team)}/${segment(note)}/${pageId}`,
    pageVersion: (team: string, note: string, pageId: number, index: number) =>
      `${base}/${segment(team)}/${segment(note)}/${pageId}/histories/${index}`,
    issue: (team: string, note: string, index: number) => `${base}/${segment(team)}/${segment(note)}/issues/${index}`,
    request: (team: string, note: string, index: number) => `${base}/${segment(team)}/${segment(note)}/requests/${index}`,
    attachment: (id: number) => `${base}/api/v1/attachments/${id}`,
    attachmentPath: (id: number) => `/api/v1/attachments/${id}`,
  };
}
