// Typed linting for promises, on demand (`npm run lint:promises`): a promise nobody awaits or
// handles, or one used as a condition, a spread or a void callback. It needs type information,
// about 25 s of CPU here, so it is not part of `npm run lint`; run it after changing what is
// asynchronous (the store's interface is, docs/architecture.md). Known and left: four async
// functions given as void callbacks (cli/commands/serve.ts's signal handlers, two tests).
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'data/**', 'dist/**', 'build/**', '.tmp/**', 'scratch/**', '**/*.js', '**/*.mjs'] },
  {
    files: ['**/*.ts'],
    // Only these two rules run here: the main config's disable comments are not this config's business.
    linterOptions: { reportUnusedDisableDirectives: 'off' },
    languageOptions: { parser: tseslint.parser, parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        { allowForKnownSafeCalls: [{ from: 'package', name: ['test', 'it', 'describe', 'suite'], package: 'node:test' }] },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
);
