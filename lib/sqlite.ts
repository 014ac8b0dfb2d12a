import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import Database from 'better-sqlite3';

/**
 * better-sqlite3's native module is built for one Node.js ABI (node_modules/better-sqlite3/build/).
 * A build for another ABI (scripts/build-sqlite-abi.mjs puts one at
 * lib/binding/node-v<abi>-<platform>-<arch>/ inside the package, e.g. for Node.js 22 beside 20)
 * is used when this process runs that ABI; otherwise the package's own build.
 */
let binding: string | null | undefined;

export function nativeBinding(): string | undefined {
  if (binding === undefined) {
    const pkg = path.dirname(createRequire(import.meta.url).resolve('better-sqlite3/package.json'));
    const file = path.join(pkg, 'lib', 'binding', `node-v${process.versions.modules}-${process.platform}-${process.arch}`, 'better_sqlite3.node');
    binding = fs.existsSync(file) ? file : null;
  }
  return binding ?? undefined;
}

/** Opens a SQLite connection with the native module built for this Node.js. */
export function openSqlite(file: string, options: Database.Options = {}): Database.Database {
  const native = nativeBinding();
  return new Database(file, native ? { ...options, nativeBinding: native } : options);
}
