// Errors as values a program can branch on: every answer of 400 and more becomes a NotesApiError carrying the
// problem details the service sends (RFC 9457): `code` is the document's stable union of problem codes, `detail` the
// explanation for humans, `requestId` what to quote to an operator, and for a 409 the conflict's data.
import type { EditConflict, Problem } from '../../generated/client/types.gen.ts';
import { retryAfterMs } from './retry-after.ts';

/** One of the problem codes the API document lists (`Problem.code`). */
export type ProblemCode = Problem['code'];

/** What a 409 carries beside the problem: the page's latest version and the overlapping regions of an edit conflict. */
export type ConflictData = Partial<Omit<EditConflict, keyof Problem>> & Record<string, unknown>;

export class NotesApiError extends Error {
  override readonly name = 'NotesApiError';
  /** The HTTP status of the answer. */
  readonly status: number;
  /** The stable problem code; `network_error`, `timeout` or `unexpected_answer` when no problem came back
   *  (`rate_limited` for a 429 without one). */
  readonly code: ProblemCode | 'network_error' | 'timeout' | 'unexpected_answer';
  readonly detail: string | undefined;
  /** The request id the server logged the failure under (`X-Request-Id`). */
  readonly requestId: string | undefined;
  /** Each field the service refused (`errors` of a 400 or 422). */
  readonly errors: Problem['errors'];
  /** For a 409: what the conflict is about (an edit conflict's latest version, content and regions). */
  readonly conflict: ConflictData | undefined;
  /** The whole problem as sent. */
  readonly problem: Problem | undefined;
  /**
   * The wait the answer's `Retry-After` asked for, in milliseconds (a 429 or 503), which the SDK did not wait: it was
   * longer than the client's `maxRetryWaitMs`, the retries were spent, or the request is not one it retries (a
   * POST's 503). Come back after it. Undefined when the answer had no readable `Retry-After` (retry-after.ts).
   */
  readonly retryAfterMs: number | undefined;

  constructor(status: number, problem: Problem | undefined, options: { requestId?: string | undefined; code?: NotesApiError['code'] | undefined; message?: string; cause?: unknown; retryAfterMs?: number | undefined } = {}) {
    const code = problem?.code ?? options.code ?? 'unexpected_answer';
    const message = options.message ?? `${status || ''} ${code}${problem?.detail ? `: ${problem.detail}` : ''}`.trim();
    super(options.retryAfterMs === undefined ? message : `${message} (Retry-After: ${Math.ceil(options.retryAfterMs / 1000)} s)`, { cause: options.cause });
    this.status = status;
    this.code = code;
    this.retryAfterMs = options.retryAfterMs;
    this.detail = problem?.detail;
    this.requestId = problem?.request_id ?? options.requestId;
    this.errors = problem?.errors;
    this.problem = problem;
    if (status === 409 && problem) {
      const { type: _type, title: _title, status: _status, detail: _detail, code: _code, request_id: _id, errors: _errors, ...rest } = problem as Problem & Record<string, unknown>;
      this.conflict = rest as ConflictData;
    }
  }

  /** Whether this is the problem `code` (narrows `conflict` nothing more: read it for 409s). */
  is(code: NotesApiError['code']): boolean {
    return this.code === code;
  }
}

/** The error an answer of 400 or more stands for, from its body as the generated client parsed it. */
export function errorOfAnswer(body: unknown, response: Response | undefined): NotesApiError {
  const status = response?.status ?? 0;
  const requestId = response?.headers.get('x-request-id') ?? undefined;
  const problem = isProblem(body) ? body : undefined;
  return new NotesApiError(status, problem, {
    requestId,
    // a 429 without problem details (a proxy's, a gateway's) is still a rate limit
    code: status === 429 ? 'rate_limited' : undefined,
    message: problem ? undefined : `${status} ${typeof body === 'string' ? body.slice(0, 200) : 'unexpected answer'}`,
    retryAfterMs: retryAfterMs(response?.headers.get('retry-after')),
  });
}

function isProblem(body: unknown): body is Problem {
  return typeof body === 'object' && body !== null && typeof (body as { code?: unknown }).code === 'string' && typeof (body as { status?: unknown }).status === 'number';
}
