// Four projects: `unit` needs nothing; `integration` runs against the real local environment, which
// its global setup brings up (or reuses when KRUISE_TS_ENV_JSON names a running one); `install`
// installs kruise-ts as pods (the image, kubectl apply -k) on a cluster of its own; `demo` runs the
// README's main command, which brings up an environment of its own (npm test runs it after the others
// so the two clusters do not compete for the CPU).
const common = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }] },
};

export default {
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      globalSetup: '<rootDir>/test/setup/global-setup.ts',
      globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
    },
    {
      ...common,
      displayName: 'install',
      testMatch: ['<rootDir>/test/install/**/*.test.ts'],
      globalSetup: '<rootDir>/test/setup/install-setup.ts',
      globalTeardown: '<rootDir>/test/setup/install-teardown.ts',
    },
    { ...common, displayName: 'demo', testMatch: ['<rootDir>/test/demo/**/*.test.ts'] },
  ],
  testTimeout: 120000,
  // On two cores jest runs suites in its own process; a watch or keep-alive socket a suite left open
  // must not hold CI forever after every result is in.
  forceExit: true,
};
