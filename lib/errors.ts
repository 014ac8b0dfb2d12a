/** The one error type of the service layer; HTTP, MCP and the CLI translate it as they need. */
export type ErrorCode =
  | 'validation_error'
  | 'invalid_library_id'
  | 'invalid_api_key'
  | 'invalid_credentials'
  | 'forbidden'
  | 'spending_limit_exceeded'
  | 'library_not_found'
  | 'no_libraries_found'
  | 'no_documentation_found'
  | 'job_not_found'
  | 'not_found'
  | 'conflict'
  | 'payload_too_large'
  | 'request_header_fields_too_large'
  | 'request_timeout'
  | 'unsupported_media_type'
  | 'rate_limit_exceeded'
  | 'research_quota_exceeded'
  | 'license_required'
  | 'license_expired'
  | 'license_invalid'
  | 'source_disabled'
  | 'member_limit_reached'
  | 'fetch_failed'
  | 'search_failed'
  | 'embedding_failed'
  | 'method_not_allowed'
  | 'not_ready'
  | 'internal_error';

export const ERROR_STATUS: Record<ErrorCode, number> = {
  validation_error: 400,
  invalid_library_id: 400,
  invalid_api_key: 401,
  invalid_credentials: 401,
  forbidden: 403,
  spending_limit_exceeded: 402,
  library_not_found: 404,
  no_libraries_found: 404,
  no_documentation_found: 404,
  job_not_found: 404,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  request_header_fields_too_large: 431,
  request_timeout: 408,
  unsupported_media_type: 415,
  rate_limit_exceeded: 429,
  research_quota_exceeded: 429,
  license_required: 403,
  license_expired: 403,
  license_invalid: 403,
  source_disabled: 403,
  member_limit_reached: 403,
  fetch_failed: 422,
  search_failed: 503,
  embedding_failed: 503,
  method_not_allowed: 405,
  not_ready: 503,
  internal_error: 500,
};

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** Extra response headers (Retry-After, RateLimit-*). */
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: { status?: number; headers?: Record<string, string>; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'ApiError';
    this.code = code;
    this.status = options.status ?? ERROR_STATUS[code];
    this.headers = options.headers ?? {};
  }

  toBody(): { error: string; message: string } {
    return { error: this.code, message: this.message };
  }
}

export function isApiError(err: unknown): err is ApiError {
  return err instanceof ApiError;
}
