import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'bench/dist/', 'node_modules/', 'src/dashboard/static/vendor/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  { languageOptions: { globals: globals.node } },
  { files: ['src/dashboard/static/**/*.js'], languageOptions: { globals: globals.browser } },
  // An unused binding named with a leading underscore is a deliberate placeholder.
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
);
