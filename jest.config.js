/**
 * Test tiers by suffix: *.test.ts unit (no network), *.int.test.ts against the real local
 * services, *.e2e.test.ts over HTTP against the local stack. Three projects: `unit` needs nothing
 * running (`npm run test:unit`); `int` and `e2e` (`npm run test:int`, `npm run test:e2e`) share one
 * DynamoDB Local pool, renewed every few files (test/support/dynamo-pool.ts): both name the same
 * global setup, which Jest runs once per run however many projects name it, and every test file
 * gets its own table. `npm test` runs all three.
 */
const shared = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  transform: { '^.+\\.(t|j)sx?$': ['@swc/jest', { jsc: { target: 'es2022' } }] },
  // ESM-only packages Jest's CommonJS runtime cannot require: let swc transform them too.
  transformIgnorePatterns: ['/node_modules/(?!(@middy|@noble|@scure|jose)/)'],
  setupFiles: ['<rootDir>/test/support/env.ts'],
};

/** The local services' tiers: the leased DynamoDB Local, started once for the run. */
const services = {
  ...shared,
  testEnvironment: '<rootDir>/test/support/environment.ts',
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
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
    { ...services, displayName: 'int', testMatch: ['**/*.int.test.ts'] },
    { ...services, displayName: 'e2e', testMatch: ['**/*.e2e.test.ts'] },
  ],
};
