/**
 * Test tiers by suffix: *.test.ts unit (no network), *.int.test.ts against the real local
 * services, *.e2e.test.ts over HTTP against the local stack. One DynamoDB Local serves the whole
 * run (test/support/global-setup.ts); every test file gets its own table.
 */
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.(t|j)sx?$': ['@swc/jest', { jsc: { target: 'es2022' } }] },
  // ESM-only packages Jest's CommonJS runtime cannot require: let swc transform them too.
  transformIgnorePatterns: ['/node_modules/(?!(@middy|@noble|@scure)/)'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  setupFiles: ['<rootDir>/test/support/env.ts'],
  testTimeout: 60_000,
  maxWorkers: 2,
};
