import crypto from 'node:crypto';
import path from 'node:path';
import { ApiError } from '../../lib/errors.ts';

/** Names for source libraries and their inputs: library-ID slugs, upload paths, text decoding. */

/** UTF-8 (BOM stripped) unless the bytes carry a UTF-16 BOM. */
export function decodeText(buf: Buffer): string {
  if (buf[0] === 0xff && buf[1] === 0xfe) return new TextDecoder('utf-16le').decode(buf.subarray(2));
  if (buf[0] === 0xfe && buf[1] === 0xff) return new TextDecoder('utf-16be').decode(buf.subarray(2));
  return new TextDecoder('utf-8').decode(buf).replace(/^\uFEFF/, '');
}

/**
 * Relative paths of uploaded files: forward slashes, no absolute paths, no drive letters, no `..`
 * or `.` segments, no control characters. Returns the normalized path.
 */
export function checkRelativePath(raw: string, index: number): string {
  const where = `relativePaths[${index}]`;
  if (typeof raw !== 'string' || !raw.trim()) throw new ApiError('validation_error', `${where} is empty.`);
  if (raw.length > 1000) throw new ApiError('validation_error', `${where} is longer than 1000 characters.`);
  if (/[\u0000-\u001f]/.test(raw)) throw new ApiError('validation_error', `${where} contains control characters.`);
  const p = raw.replace(/\\/g, '/');
  if (p.startsWith('/') || /^[a-zA-Z]:/.test(p) || p.startsWith('//'))
    throw new ApiError('validation_error', `${where} "${raw}" is an absolute path; give a path relative to the collection.`);
  const parts = p.split('/').filter((s) => s !== '');
  if (parts.some((s) => s === '..' || s === '.'))
    throw new ApiError('validation_error', `${where} "${raw}" contains "." or ".." segments; paths must stay inside the collection.`);
  return parts.join('/');
}

/** URL -> library id part: host (dots as _, port kept) and path segments joined with -, e.g. docs_example_com-api-llms.txt. */
export function urlSlug(raw: string): string {
  const u = new URL(raw);
  const host = u.host.toLowerCase().replace(/[.:]/g, '_');
  const segs = u.pathname
    .split('/')
    .filter(Boolean)
    .map((s) => decodeURIComponent(s));
  let slug = [host, ...segs]
    .join('-')
    .replace(/[^a-zA-Z0-9._-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '');
  if (u.search) slug += `-${shortHash(u.search)}`;
  if (slug.length > 120) slug = `${slug.slice(0, 110).replace(/[-.]+$/, '')}-${shortHash(raw)}`;
  return slug.toLowerCase();
}

/** Title -> library id part: lower-case ASCII words joined with -. */
export function titleSlug(title: string): string {
  const slug = title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80)
    .replace(/-+$/, '');
  return slug || `library-${shortHash(title)}`;
}

export function shortHash(s: string): string {
  return crypto.createHash('sha1').update(s).digest('hex').slice(0, 8);
}

export function safeName(name: string): string {
  return encodeURIComponent(path.posix.basename(name.replace(/\\/g, '/')));
}

export function stripExt(name: string): string {
  return name.replace(/\.[a-z0-9]{1,5}$/i, '');
}

export function firstParagraph(text: string): string {
  const p =
    text
      .split(/\n\s*\n/)[0]
      ?.replace(/\s+/g, ' ')
      .trim() ?? '';
  return p.length > 500 ? `${p.slice(0, 497)}...` : p;
}
