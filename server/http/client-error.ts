import { STATUS_CODES, maxHeaderSize } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError } from '../../lib/errors.ts';

/**
 * The answer to a request Node's HTTP parser rejected before Express saw it (the server's
 * 'clientError' event): the same `{error, message}` body as every other error, instead of Node's
 * empty one. Status codes as Node chooses them: 431, 413, 408, else 400.
 */
export function clientErrorAnswer(err: Error & { code?: string; reason?: string }): { status: number; body: { error: string; message: string } } {
  let e: ApiError;
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      e = new ApiError(
        'request_header_fields_too_large',
        `The request headers are larger than the server accepts (${Math.round(maxHeaderSize / 1024)} KB in all).`,
      );
      break;
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      e = new ApiError('payload_too_large', 'The chunk extensions of the request body are larger than the server accepts.');
      break;
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      e = new ApiError('request_timeout', 'The request was not received in time.');
      break;
    default: {
      // llhttp's reason ("Invalid header value char") is short and safe to show; the raw input is never echoed.
      const reason = typeof err.reason === 'string' && err.reason ? err.reason.replace(/\.$/, '') : 'malformed request';
      e = new ApiError('validation_error', `The request is not valid HTTP: ${reason.charAt(0).toLowerCase()}${reason.slice(1)}.`);
    }
  }
  return { status: e.status, body: e.toBody() };
}

/** Listener for http.Server's 'clientError': writes a complete HTTP/1.1 error response and closes the connection. */
export function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  // A reset connection or one already closed has nobody to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed || !socket.writable) {
    socket.destroy();
    return;
  }
  // As Node does: do not write into a response that has begun on this connection.
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const { status, body } = clientErrorAnswer(err);
  const payload = JSON.stringify(body);
  const head =
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(payload)}\r\n` +
    'X-Content-Type-Options: nosniff\r\n' +
    'Connection: close\r\n\r\n';
  socket.end(head + payload, () => socket.destroy());
}
