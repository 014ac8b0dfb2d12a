/** Code block language: from the element's classes when declared, otherwise guessed from the code. */

const ALIASES: Record<string, string> = {
  js: 'javascript', mjs: 'javascript', cjs: 'javascript', jsx: 'jsx', ts: 'typescript', tsx: 'tsx', sh: 'bash', shell: 'bash', zsh: 'bash',
  console: 'bash', shellsession: 'bash', py: 'python', python3: 'python', rb: 'ruby', yml: 'yaml', rs: 'rust', 'c++': 'cpp', cs: 'csharp',
  'c#': 'csharp', kt: 'kotlin', md: 'markdown', htm: 'html', xhtml: 'html', plaintext: 'text', txt: 'text', none: 'text', ps1: 'powershell',
  golang: 'go', dockerfile: 'dockerfile', docker: 'dockerfile',
};

/** Normalized language name, or null when the classes do not say. `language-rust no_run` -> rust. */
export function languageFromClass(className: string | null | undefined): string | null {
  if (!className) return null;
  for (const token of className.split(/\s+/)) {
    const m = /^(?:language|lang|highlight|hljs-lang|brush:?)-([A-Za-z0-9_+#.-]+)$/i.exec(token);
    if (m) return normalizeLanguage(m[1]!);
  }
  return null;
}

export function normalizeLanguage(name: string): string {
  const n = name.toLowerCase().replace(/[,;]+$/, '');
  return ALIASES[n] ?? n;
}

/** A cheap guess for blocks that declare no language; 'text' when nothing fits. */
export function detectLanguage(code: string): string {
  const s = code.trim();
  if (!s) return 'text';
  if (/^(\$|#!\/bin\/(ba|z)?sh)\s/m.test(s) || /^(npm|npx|yarn|pnpm|pip|cargo|git|docker|curl|apt(-get)?|brew|make|cd|ls|export|sudo)\s/m.test(s)) return 'bash';
  if (/^\s*[[{]/.test(s) && /^[\s\S]*[\]}]\s*$/.test(s)) {
    try {
      JSON.parse(s);
      return 'json';
    } catch {
      /* not JSON */
    }
  }
  if (/^\s*<(!doctype|html|div|head|body|span|p|a|script|template)\b/i.test(s)) return 'html';
  if (/\bfn\s+\w+\s*\(|\blet\s+mut\b|\bimpl\b.*\{|::\w+|\buse\s+[\w:]+;|#\[derive/.test(s)) return 'rust';
  if (/^\s*(def|class)\s+\w+.*:\s*$|^\s*(from\s+\w+\s+)?import\s+\w+/m.test(s) && !/[;{}]\s*$/m.test(s)) return 'python';
  if (/^\s*package\s+\w+|\bfunc\s+\w+\(|:=/.test(s)) return 'go';
  if (/\b(interface|type)\s+\w+\s*[={<]|:\s*(string|number|boolean)\b/.test(s)) return 'typescript';
  if (/\b(const|let|var|function)\s+\w+|=>|\brequire\(|\bimport\s.+\sfrom\s/.test(s)) return 'javascript';
  if (/^\s*\[[\w.-]+\]\s*$/m.test(s) && /^\s*[\w.-]+\s*=\s*/m.test(s)) return 'toml';
  if (/^\s*[\w-]+:\s+\S/m.test(s) && /^\s*-\s+\S|^\s*[\w-]+:\s*$/m.test(s)) return 'yaml';
  if (/^\s*(SELECT|INSERT|UPDATE|DELETE|CREATE)\s/i.test(s)) return 'sql';
  if (/^\s*[.#]?[\w-]+\s*\{[^}]*:[^}]*\}/m.test(s)) return 'css';
  return 'text';
}
