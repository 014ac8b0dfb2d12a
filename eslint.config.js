// ESLint (flat config) with typescript-eslint's recommended rules, without type information
// (the type-aware set costs ~25 s per run here; `npm run typecheck` runs tsc itself). The import
// rules between layers are dependency-cruiser's (.dependency-cruiser.mjs); `npm run lint` runs both, then Biome's
// check of the layout (biome.jsonc), which owns it: no rule here is about layout.
import tseslint from 'typescript-eslint';
import globals from 'globals';
import regexp from 'eslint-plugin-regexp';

export default tseslint.config(
  { ignores: ['node_modules/**', 'data/**', 'dist/**', 'build/**', '.tmp/**', 'scratch/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.{ts,mjs,js}'],
    rules: {
      // `_name` marks a parameter or binding that is there on purpose (an Express error handler's next, a rest sibling).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
      '@typescript-eslint/no-unused-expressions': ['error', { allowShortCircuit: true, allowTernary: true }],
      // Small files and short functions (issue 14): split what grows past these. Lines of code are
      // counted, not comments or blank lines: the formatter lays long calls out one argument a line
      // (Biome, issue 40), and the reasons written beside the code should not be what a split saves.
      'max-lines': ['error', { max: 400, skipBlankLines: true, skipComments: true }],
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    // A pattern that backtracks in the square or cube of its input's length lets one question
    // stall the server (issue 41): refused everywhere.
    files: ['**/*.{ts,mjs,js}'],
    plugins: { regexp },
    rules: { 'regexp/no-super-linear-backtracking': 'error' },
  },
  {
    // The store's interface is asynchronous and one method is one transaction (docs/architecture.md):
    // nothing outside server/store/ reaches for its SQLite handle to run SQL or a transaction of its own.
    files: ['server/**/*.ts', 'cli/**/*.ts'],
    ignores: ['server/store/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[property.name='db'][object.name='store'], MemberExpression[property.name='db'][object.property.name='store']",
          message: 'SQL and transactions belong in server/store/: add a store method.',
        },
      ],
    },
  },
  {
    // typescript-eslint turns no-undef off (tsc checks names); plain JavaScript has no tsc, so ESLint checks it.
    files: ['**/*.{mjs,js}'],
    languageOptions: { globals: { ...globals.node } },
    rules: { 'no-undef': 'error' },
  },
  {
    // The web console and the fixture sites run in a browser.
    files: ['server/web/public/js/**/*.js', 'test/fixtures/sites/**/*.js'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    // Tests read JSON bodies loosely typed.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
