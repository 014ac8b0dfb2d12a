/**
 * Typed arrays stored as SQLite blobs. better-sqlite3 returns each blob as a Buffer that may sit at
 * any offset of a shared pool, so a view needs the element's alignment; otherwise it is a copy.
 */
export function blobOf(a: ArrayBufferView): Buffer {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength);
}

export function u16Of(buf: Buffer): Uint16Array {
  if (buf.byteOffset % 2 === 0) return new Uint16Array(buf.buffer, buf.byteOffset, buf.byteLength >> 1);
  return new Uint16Array(Uint8Array.from(buf).buffer);
}

export function f32Of(buf: Buffer): Float32Array {
  if (buf.byteOffset % 4 === 0) return new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength >> 2);
  return new Float32Array(Uint8Array.from(buf).buffer);
}
