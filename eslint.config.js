// ESLint for the pages' own JavaScript (static/js): `make lint` runs it, `npx eslint` from the top of the repo too.
// The files are ES modules loaded by the browser (<script type="module">) with no bundler; Plotly is the one
// global a classic <script> provides. static/vendor holds third-party bundles and is not ours to lint.
import js from '@eslint/js';
import globals from 'globals';

export default [
  { ignores: ['static/vendor/**', '**/node_modules/**', 'tools/plotly_bundle/**', 'tests/**', '.venv/**'] },
  js.configs.recommended,
  {
    files: ['static/js/**/*.js'],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: 'module',
      globals: { ...globals.browser, Plotly: 'readonly' },
    },
    // Beyond the recommended set: what the code already does everywhere, kept so.
    rules: {
      eqeqeq: ['error', 'smart'], // === except `== null`, which means null or undefined
      'no-var': 'error',
      'prefer-const': 'error',
    },
  },
];
