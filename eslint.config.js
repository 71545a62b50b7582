// Lint with zero warnings allowed (npm run lint). Type-aware rules catch floating promises.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { layersPlugin } from './eslint/layers.js';

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'dist-tools/',
      'node_modules/',
      'coverage/',
      '.jest-cache/',
      'data/',
      'src/generated/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['*.js', 'eslint/*.js'] },
        tsconfigRootDir: import.meta.dirname,
      },
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': [
        'error',
        { checksVoidReturn: { arguments: false } },
      ],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { prefer: 'type-imports', fixStyle: 'inline-type-imports', disallowTypeAnnotations: false },
      ],
      'no-restricted-properties': [
        'error',
        {
          object: 'process',
          property: 'env',
          message: 'Read configuration through loadConfig (src/platform/config/app-config.ts).',
        },
      ],
      'no-console': 'error',
    },
  },
  {
    // The one place that reads the environment, the hand-over of the resolved configuration from a primary
    // to its gateway workers, the bench and its preload, and the test harness that hands the environment to
    // children.
    files: [
      'src/platform/config/app-config.ts',
      'src/platform/cluster/gateway-workers.ts',
      'tools/bench.ts',
      'tools/trail-scale.ts',
      'tools/write-timeline.ts',
      'tools/soak.ts',
      'tools/soak/**/*.ts',
      'test/**/*.ts',
    ],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
  {
    // The direction of dependencies between src/'s folders (eslint/layers.js).
    files: ['src/**/*.ts'],
    plugins: { layers: layersPlugin },
    rules: { 'layers/direction': 'error' },
  },
  {
    // Imports that leave a module's neighbourhood go by path (#src/…): node scripts/path-imports.js.
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            // The fast spec tier beside the code may reach the test support (a database of its own).
            {
              regex: '^\\.\\./\\.\\./(?!(\\.\\./)*test/support/)',
              message: 'Import by path: #src/….',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^(\\.\\./)+src/', message: 'Import src/ by path: #src/….' }] },
      ],
    },
  },
);
