// A small HTTP client for black-box tests: JSON, legacy form and raw bodies, and the answer with status, headers
// and parsed body.
export type Answer<T = any> = { status: number; headers: Headers; body: T; text: string };

export type RequestOptions = {
  json?: unknown;
  /** A form body: an object of bracket names to values, or a raw urlencoded string. */
  form?: Record<string, string | string[]> | string;
  raw?: { body: string | Uint8Array; contentType?: string };
  headers?: Record<string, string>;
  query?: Record<string, string>;
  /** Send the token as ?access_token= instead of the Authorization header. */
  tokenInQuery?: boolean;
};

export function formBody(fields: Record<string, string | string[]>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) {
    if (Array.isArray(value)) value.forEach((item) => params.append(name, item));
    else params.append(name, value);
  }
  return params.toString();
}

export class ApiClient {
  readonly baseUrl: string;
  readonly token: string | undefined;

  constructor(baseUrl: string, token?: string) {
    this.baseUrl = baseUrl;
    this.token = token;
  }

  async request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<Answer<T>> {
    const url = new URL(this.baseUrl + path);
    for (const [name, value] of Object.entries(options.query ?? {})) url.searchParams.set(name, value);
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    if (this.token && options.tokenInQuery) url.searchParams.set('access_token', this.token);
    else if (this.token && !('authorization' in headers) && !('Authorization' in headers)) headers.Authorization = `Bearer ${this.token}`;
    let body: string | Uint8Array | undefined;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['Content-Type'] ??= 'application/json';
    } else if (options.form !== undefined) {
      body = typeof options.form === 'string' ? options.form : formBody(options.form);
      headers['Content-Type'] ??= 'application/x-www-form-urlencoded';
    } else if (options.raw) {
      body = options.raw.body;
      if (options.raw.contentType) headers['Content-Type'] = options.raw.contentType;
    }
    const response = await fetch(url, { method, headers, body: body as RequestInit["body"], redirect: 'manual' });
    const text = await response.text();
    let parsed: unknown = undefined;
    const type = response.headers.get('content-type') ?? '';
    if (text !== '' && (type.includes('json'))) parsed = JSON.parse(text);
    return { status: response.status, headers: response.headers, body: parsed as T, text };
  }

  get<T = any>(path: string, options?: RequestOptions) { return this.request<T>('GET', path, options); }
  post<T = any>(path: string, options?: RequestOptions) { return this.request<T>('POST', path, options); }
  put<T = any>(path: string, options?: RequestOptions) { return this.request<T>('PUT', path, options); }
  patch<T = any>(path: string, options?: RequestOptions) { return this.request<T>('PATCH', path, options); }
  delete<T = any>(path: string, options?: RequestOptions) { return this.request<T>('DELETE', path, options); }
}
