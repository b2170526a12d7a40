/**
 * Test tiers by suffix: *.test.ts unit (no network), *.int.test.ts against the real local
 * services, *.e2e.test.ts over HTTP against the local stack. Two projects: `unit` needs nothing
 * running (`npm run test:unit`); `services` (int and e2e) shares one DynamoDB Local, renewed every
 * few files (test/support/dynamo-pool.ts), and every test file gets its own table.
 */
const shared = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  transform: { '^.+\\.(t|j)sx?$': ['@swc/jest', { jsc: { target: 'es2022' } }] },
  // ESM-only packages Jest's CommonJS runtime cannot require: let swc transform them too.
  transformIgnorePatterns: ['/node_modules/(?!(@middy|@noble|@scure)/)'],
  setupFiles: ['<rootDir>/test/support/env.ts'],
};

/** @type {import('jest').Config} */
module.exports = {
  testTimeout: 60_000,
  maxWorkers: 2,
  projects: [
    {
      ...shared,
      displayName: 'unit',
      testMatch: ['**/*.test.ts'],
      testPathIgnorePatterns: ['\\.int\\.test\\.ts$', '\\.e2e\\.test\\.ts$'],
    },
    {
      ...shared,
      displayName: 'services',
      testMatch: ['**/*.int.test.ts', '**/*.e2e.test.ts'],
      testEnvironment: '<rootDir>/test/support/environment.ts',
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
};
