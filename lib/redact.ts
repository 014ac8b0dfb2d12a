/**
 * Secrets out of records (the server log at every level, the audit log): by the name of the field
 * that holds a value, and by the shape of the value itself, wherever it sits (a URL path, a query
 * string, an error message, a JSON text inside a string). Field names alone are not enough: a key
 * pasted into a URL path or a license signature in a field the caller named has no telling name.
 *
 * What is redacted by shape: Stacks API keys (stk_...), Authorization values (Bearer/Basic/...),
 * `user:password@` and token user names in URLs, Git host tokens (GitHub, GitLab, Bitbucket, Slack
 * prefixes), PEM private keys (also cut-off ones), `name=value` and `"name": "value"` pairs whose
 * name says secret (password, token, signature, csrf, session, cookie, api key, ...), and long
 * random-looking base64 strings (session ids, CSRF tokens, signatures). Hex digests are kept: commit
 * IDs and content hashes are what a log is read for, and no secret of Stacks is written in hex.
 */

export const REDACTED = '[redacted]';

/** Field names whose values are secrets, compared lower case without `-`, `_` or spaces. */
const SECRET_NAME_EXACT = new Set(['key', 'sig', 'pass', 'pwd', 'auth', 'sid', 'setcookie']);
const SECRET_NAME_PART =
  /password|passphrase|passwd|secret|signature|credential|authorization|cookie|csrf|xsrf|privatekey|sshkey|apikey|accesskey|session|token(?!s$|count|budget|limit)/;

/** True for a field name that says its value is a secret (`apiKey`, `x-csrf-token`, `licenseSignature`, ...). */
export function isSecretName(name: string): boolean {
  const n = name.toLowerCase().replace(/[-_\s]/g, '');
  return SECRET_NAME_EXACT.has(n) || SECRET_NAME_PART.test(n);
}

/**
 * `name=value` and `"name": value` pairs in free text (query strings, forms, cookies, JSON text,
 * messages) whose name says secret. The short names (key, sig, ...) count only as a query or form
 * field (`key=`) or a quoted JSON name, so that "Unrecognized key: x" is left alone.
 */
const LONG_NAME = String.raw`[A-Za-z0-9_-]{0,40}(?:password|passphrase|passwd|secret|signature|credential|authorization|cookie|csrf|xsrf|private[_-]?key|ssh[_-]?key|api[_-]?key|access[_-]?key|session|token(?!s\b|[_-]?count|[_-]?budget|[_-]?limit))[A-Za-z0-9_-]{0,40}`;
const SHORT_NAME = 'key|sig|pass|pwd|auth|sid';
// A quoted value may have lost its closing quote (a text cut short): it then runs to the end.
const PAIR_VALUE = String.raw`(?:(?:Bearer|Basic|Digest|Token)\s+)?(?:"(?:[^"\\]|\\.)*(?:"|$)|'[^']*(?:'|$)|[^\s&,;{}\[\]"')]+)`;
const PAIR = new RegExp(
  String.raw`(?<![A-Za-z0-9_-])((["']?)(?:${LONG_NAME})\2\s*[:=]\s*|(["'])(?:${SHORT_NAME})\3\s*:\s*|(?:${SHORT_NAME})=)(${PAIR_VALUE})`,
  'gi',
);

type Rule = [RegExp, (match: string, ...groups: string[]) => string];
const replaceWith = (text: string) => () => text;

/** Applied in this order: the first rules take whole blocks and pairs, the last ones single tokens. */
const RULES: Rule[] = [
  // A PEM private key, to its END line or, cut off, to the end of the text.
  [/-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g, replaceWith('[redacted private key]')],
  // A count under a secret-sounding name (tokens=5000 is excluded above, tokenLimit: 3) is not a secret.
  [
    PAIR,
    (_m, prefix: string, _q1: string, _q2: string, value: string) =>
      /^["']?(?:\d{1,12}|true|false|null)["']?$/.test(value) ? `${prefix}${value}` : `${prefix}${quoted(value)}`,
  ],
  // Authorization header values: a scheme and its credentials.
  [/\b(Bearer|Basic|Digest|Token|ApiKey)\s+[A-Za-z0-9._~+/=:-]{6,}/gi, (_m, scheme: string) => `${scheme} ${REDACTED}`],
  // user:password@ in a URL, and a token as the user name (https://ghp_...@github.com).
  [/:\/\/([^/?#\s:@]{0,200}):([^/?#\s@]{0,1000})@/g, (_m, user: string) => `://${user}:${REDACTED}@`],
  [/:\/\/([^/?#\s:@]{20,1000})@/g, () => `://${REDACTED}@`],
  // Stacks API keys.
  [/\bstk_[A-Za-z0-9_-]+/g, replaceWith(`stk_${REDACTED}`)],
  // Git host and chat tokens by their documented prefixes.
  [
    /\b(?:gh[opusr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|gl(?:pat|dt|rt|ptt|cbt|oas|ft|imt|agent)-[A-Za-z0-9_-]{20,}|ATBB[A-Za-z0-9]{20,}|ATATT[A-Za-z0-9_=-]{20,}|xox[abprs]-[A-Za-z0-9-]{10,})/g,
    replaceWith(REDACTED),
  ],
  // Random-looking base64url runs (session ids, CSRF and setup tokens, signatures): long, mixed case and digits.
  [/(?<![A-Za-z0-9_+/=-])[A-Za-z0-9_-]{32,}={0,2}(?![A-Za-z0-9_+/=-])/g, (m) => (looksRandom(m) ? REDACTED : m)],
  // Standard base64 (signatures, keys): as long, with a `+` or padding, so that a URL path is not taken for one.
  [/(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{40,}={0,2}(?![A-Za-z0-9+/=])/g, (m) => (looksRandom(m) && /[+]|=$/.test(m) ? REDACTED : m)],
];

function looksRandom(s: string): boolean {
  return /[0-9]/.test(s) && /[a-z]/.test(s) && /[A-Z]/.test(s);
}

/** The redaction in the quoting the value had, so that JSON text stays JSON. */
function quoted(value: string): string {
  const q = /^["']/.exec(value)?.[0];
  return q ? `${q}${REDACTED}${q}` : REDACTED;
}

/** A text with every secret shape in it redacted. */
export function scrubSecrets(text: string): string {
  let out = text;
  for (const [re, by] of RULES) out = out.replace(re, by);
  return out;
}

/** How deep redactValue looks into nested objects; deeper values are replaced. */
const MAX_DEPTH = 8;
/**
 * What redactValue reads of one string, one array, one object: the rules are linear, but a record
 * needs no megabyte of a request body, and the work per log call or audit entry stays bounded.
 */
const MAX_STRING = 8192;
const MAX_ITEMS = 1000;

/**
 * A copy of a value with every secret redacted: strings by shape, object fields by name (a secret
 * name's string or object value is replaced whole; a number under it, a count, is kept). Errors
 * become plain objects (type, message, stack, code, cause). Cycles and depth are cut.
 */
export function redactValue(value: unknown, depth = 0, seen: WeakSet<object> = new WeakSet()): unknown {
  if (typeof value === 'string')
    return value.length > MAX_STRING ? `${scrubSecrets(value.slice(0, MAX_STRING))}…[${value.length - MAX_STRING} more characters]` : scrubSecrets(value);
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value)) return '[circular]';
  if (depth >= MAX_DEPTH) return '[object]';
  seen.add(value);
  if (value instanceof Error) return redactValue(errorFields(value), depth, seen);
  if (Buffer.isBuffer(value)) return `[${value.length} bytes]`;
  if (Array.isArray(value)) {
    const items = value.slice(0, MAX_ITEMS).map((v) => redactValue(v, depth + 1, seen));
    return value.length > MAX_ITEMS ? [...items, `[${value.length - MAX_ITEMS} more items]`] : items;
  }
  if (value instanceof Date) return value;
  if (value instanceof URL) return scrubSecrets(value.href);
  if (value instanceof Map) return redactValue(Object.fromEntries(value), depth, seen);
  if (value instanceof Set) return redactValue([...value], depth, seen);
  const out: Record<string, unknown> = {};
  let n = 0;
  for (const k in value) {
    if (!Object.hasOwn(value, k)) continue;
    if (++n > MAX_ITEMS) {
      out['…'] = 'more fields';
      break;
    }
    const v = (value as Record<string, unknown>)[k];
    out[k] = isSecretName(k) && v !== null && (typeof v === 'string' || typeof v === 'object') ? REDACTED : redactValue(v, depth + 1, seen);
  }
  return out;
}

/** An Error's fields as a plain object (what pino's error serializer writes), its own extra fields included. */
function errorFields(err: Error): Record<string, unknown> {
  const fields: Record<string, unknown> = { type: err.name, message: err.message, stack: err.stack };
  for (const [k, v] of Object.entries(err)) if (!(k in fields)) fields[k] = v;
  if (err.cause !== undefined) fields.cause = err.cause;
  return fields;
}
