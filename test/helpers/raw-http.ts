import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

/**
 * Requests fetch cannot send: a multipart body cut short, a body that ends before its declared
 * Content-Length, a connection dropped mid-upload. Written byte for byte on a socket.
 */

export interface Part {
  name: string;
  /** Present for a file part. */
  filename?: string;
  type?: string;
  data: Buffer | string;
}

/** A multipart/form-data body; `closed: false` leaves out the closing boundary (a truncated form). */
export function multipartBody(boundary: string, parts: Part[], closed = true): Buffer {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const disposition = `form-data; name="${p.name}"${p.filename === undefined ? '' : `; filename="${p.filename}"`}`;
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${p.type ? `Content-Type: ${p.type}\r\n` : ''}\r\n`));
    chunks.push(Buffer.isBuffer(p.data) ? p.data : Buffer.from(p.data));
    chunks.push(Buffer.from('\r\n'));
  }
  if (closed) chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

export interface RawAnswer {
  status: number;
  headers: string;
  body: string;
}

/**
 * POSTs `body` on a fresh connection and reads the answer. The Content-Length is the body's unless
 * `declaredLength` says otherwise; the connection stays open (not half-closed) until the answer is in.
 */
export function rawPost(baseUrl: string, pathname: string, o: { headers: Record<string, string>; body: Buffer; declaredLength?: number }): Promise<RawAnswer> {
  const u = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(u.port), u.hostname);
    let raw = Buffer.alloc(0);
    const timer = setTimeout(() => (socket.destroy(), reject(new Error(`no answer to POST ${pathname} in 20 s`))), 20_000);
    socket.on('connect', () => socket.write(Buffer.concat([head(pathname, o.headers, o.declaredLength ?? o.body.length), o.body])));
    socket.on('data', (d: Buffer) => {
      raw = Buffer.concat([raw, d]);
      const answer = parseAnswer(raw);
      if (answer) {
        clearTimeout(timer);
        socket.destroy();
        resolve(answer);
      }
    });
    socket.on('error', (err) => (clearTimeout(timer), reject(err)));
    socket.on('close', () => {
      clearTimeout(timer);
      reject(new Error(`connection closed without a full answer: ${raw.toString('utf8').slice(0, 200)}`));
    });
  });
}

/**
 * Sends the head and the first bytes of a body that declares more, waits until `ready()` (the
 * server has started storing it), then drops the connection: the client that vanishes mid-upload.
 */
export async function postAndVanish(
  baseUrl: string,
  pathname: string,
  o: { headers: Record<string, string>; body: Buffer; declaredLength: number; ready: () => boolean },
): Promise<void> {
  const u = new URL(baseUrl);
  const socket = net.connect(Number(u.port), u.hostname);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.on('error', () => {});
  socket.write(Buffer.concat([head(pathname, o.headers, o.declaredLength), o.body]));
  const end = Date.now() + 10_000;
  while (!o.ready()) {
    if (Date.now() > end) throw new Error(`the server stored nothing of the upload to ${pathname}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  socket.destroy();
}

function head(pathname: string, headers: Record<string, string>, length: number): Buffer {
  const lines = [`POST ${pathname} HTTP/1.1`, 'Host: 127.0.0.1', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), `Content-Length: ${length}`, '', ''];
  return Buffer.from(lines.join('\r\n'));
}

/** A complete HTTP/1.1 answer with a Content-Length (what the server sends for errors), or null. */
function parseAnswer(raw: Buffer): RawAnswer | null {
  const text = raw.toString('utf8');
  const split = text.indexOf('\r\n\r\n');
  if (split < 0) return null;
  const headers = text.slice(0, split);
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(headers);
  if (!length) return null;
  const body = raw.subarray(Buffer.byteLength(text.slice(0, split + 4))).toString('utf8');
  if (Buffer.byteLength(body) < Number(length[1])) return null;
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(headers)?.[1]), headers, body };
}

/** Every file (not folder) under dir, recursively, as paths relative to it; [] when dir is missing. */
export function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
}
