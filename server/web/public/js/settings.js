// The instance's public address (GET /api/settings): what every configuration and link on these
// pages is built on. Without one the console falls back to its own address and says so.
import { api } from './core.js';

let cached = null;

/** {publicUrl, source, consoleValue}; read again after a change. */
export async function loadSettings(force = false) {
  if (!cached || force) {
    try {
      cached = (await api('/api/settings')).body;
    } catch {
      cached = { publicUrl: null, source: null, consoleValue: null };
    }
  }
  return cached;
}

/** The base of generated links: the public address, else this browser's. */
export async function publicBase() {
  return (await loadSettings()).publicUrl ?? location.origin;
}
