/**
 * What each synthesized function is given (its variables, and the secrets and keys its role may
 * use), as the local stack runs it (bin/local/function-environments.ts, from
 * bin/local/environments.generated.json). Issue 38: the console was given no approval secret on AWS
 * while every test function read the test environment's; the local stack now gives each function
 * what this file's stack gives it, so that class of bug fails the service tests.
 */
import { readFileSync } from 'node:fs';
import { ENVIRONMENTS_FILE, functionName, renderEnvironments } from '../../bin/docs/environments';
import { deployedFunctions, deployedVariables, functionEnvironment, LOCAL_FORMS } from '../../bin/local/function-environments';
import { CONFIG_FIELDS, type Config, type ConfigNeed } from '../../functions/config';
import { configNeeds, ROUTES } from '../../functions/registry/routes';
import { ServiceFunction } from '../../lib/service-function';
import { synthesize } from './support';

const deployed = JSON.parse(readFileSync(ENVIRONMENTS_FILE, 'utf8')) as Record<string, { environment: string[]; granted: string[] }>;

describe('each function’s deployed environment', () => {
  it('is the synthesized stack’s (npm run docs writes it)', () => {
    expect(readFileSync(ENVIRONMENTS_FILE, 'utf8')).toBe(renderEnvironments());
  });

  it('covers every function of the stack, named as the local stack runs it', () => {
    const { stack } = synthesize();
    const names = stack.node
      .findAll()
      .filter((c): c is ServiceFunction => c instanceof ServiceFunction)
      .map((fn) => functionName(fn.entry))
      .sort();
    expect(deployedFunctions().sort()).toEqual(names);
    expect(names).toEqual(expect.arrayContaining([...ROUTES.map((r) => r.name), 'payout-worker', 'reconciler', 'webhook-delivery']));
  });

  it('gives only variables of functions/config.ts, and every secret or key it names is one the role may use', () => {
    const keys = Object.keys(CONFIG_FIELDS.shape);
    for (const [name, fn] of Object.entries(deployed)) {
      expect([name, fn.environment.filter((v) => !keys.includes(v))]).toEqual([name, []]);
      const secrets = fn.environment.filter((v) => v in LOCAL_FORMS);
      expect([name, secrets]).toEqual([name, fn.granted]);
    }
  });

  it('has a local form for every secret variable, itself a variable of functions/config.ts', () => {
    const keys = Object.keys(CONFIG_FIELDS.shape);
    const secretVariables = [...new Set(Object.values(deployed).flatMap((fn) => fn.environment))].filter(
      (v) => v.endsWith('_SECRET_ARN') || v.endsWith('_KMS_KEY_ID'),
    );
    expect(secretVariables.sort()).toEqual(Object.keys(LOCAL_FORMS).sort());
    for (const forms of Object.values(LOCAL_FORMS)) for (const form of forms) expect(keys).toContain(form);
  });

  it('meets each route’s own needs (configNeeds): what its init requires, the stack gives it', () => {
    const satisfied = (given: Set<string>, need: ConfigNeed) =>
      typeof need === 'string' ? given.has(need) : need.oneOf.some((names) => names.every((n) => given.has(n)));
    for (const route of ROUTES) {
      const given = deployedVariables(route.name);
      const unmet = configNeeds(route)({ ADMIN_AUTH: 'key' } as Config).filter((need) => !satisfied(given, need));
      expect([route.name, unmet]).toEqual([route.name, []]);
    }
  });

  it('keeps from a function what the stack gives others but not it, and passes what the stack never gives', () => {
    const env = { APPROVAL_SECRET: 'x'.repeat(40), ADMIN_KEY: 'k'.repeat(20), TABLE_NAME: 't', DYNAMODB_ENDPOINT: 'http://127.0.0.1:1' };
    expect(functionEnvironment('user-me', env)).toEqual({ TABLE_NAME: 't', DYNAMODB_ENDPOINT: 'http://127.0.0.1:1' });
    expect(functionEnvironment('create-charge', env)).toEqual({
      APPROVAL_SECRET: env.APPROVAL_SECRET,
      TABLE_NAME: 't',
      DYNAMODB_ENDPOINT: env.DYNAMODB_ENDPOINT,
    });
    // The console reads the approval secret (issue 38).
    expect(functionEnvironment('console-pages', env)).toHaveProperty('APPROVAL_SECRET');
  });
});
