import { defineConfig } from 'vitest/config';

// `paperbot-source` makes `import ... from 'paperbot'` (the examples, the scaffold, the package
// tests) resolve to src/ under test, as tsconfig.json's customConditions does for the type check.
const conditions = ['paperbot-source'];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    include: ['test/**/*.test.ts', 'strategies/**/*.test.ts'],
    exclude: ['test/bench/**', 'node_modules/**'],
    pool: 'forks',
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
