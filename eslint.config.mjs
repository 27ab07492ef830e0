import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// Client-node's models say Date where the wire has strings: product code takes Kubernetes types
// from api/types/core.ts; only the manager's kubeconfig loader uses client-node itself.
const clientNode = { name: '@kubernetes/client-node', allowTypeImports: false, message: 'take Kubernetes types from api/types/core.ts (wire types)' };
const clientNodeHomes = ['api/types/core.ts', 'api/types/common.ts', 'kube/clientnode.ts'];
const otherControllers = { group: ['../*/controller.js'], message: 'controllers share through manager/informers.ts and manager/context.ts' };

function boundaries(rules) {
  return Object.entries(rules).map(([files, banned]) => ({
    files: [files],
    ignores: clientNodeHomes,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [clientNode],
          patterns: [
            ...banned.map((dir) => ({ group: [`**/${dir}/**`], message: `${files.split('/')[0]}/ must not import ${dir}/ (ARCHITECTURE.md)` })),
            ...(files === 'manager/*/**/*.ts' ? [otherControllers] : []),
          ],
        },
      ],
    },
  }));
}

export default tseslint.config(
  { ignores: ['dist/', 'proto/gen/', 'node_modules/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'error',
    },
  },
  // Import boundaries (ARCHITECTURE.md): api/ imports nothing of ours; kube/ only api/; daemon/,
  // manager/ and cli/ build on both and never on each other; manager controllers share through
  // manager/informers.ts and manager/context.ts, never through each other's controller.ts.
  ...boundaries({
    'api/**/*.ts': ['kube', 'daemon', 'manager', 'cli', 'hack', 'test'],
    'kube/**/*.ts': ['daemon', 'manager', 'cli', 'hack', 'test'],
    'daemon/**/*.ts': ['manager', 'cli', 'hack', 'test'],
    'manager/*.ts': ['daemon', 'cli', 'hack', 'test'],
    'manager/*/**/*.ts': ['daemon', 'cli', 'hack', 'test'],
    'cli/**/*.ts': ['daemon', 'manager', 'hack', 'test'],
  }),
  {
    files: ['test/**/*.ts', 'cli/**/*.ts', 'hack/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
  {
    files: ['**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
);
