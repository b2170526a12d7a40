/**
 * Who may call the operator's routes, per stage (lib/stage-config.ts `adminAuth`, docs/operating/runbooks.md
 * "Admin access"): IAM authorization by API Gateway in production (and by default), the static
 * x-admin-key where a stage chooses it (dev in cdk.json).
 */
import { ROUTES, recognisesAdmin } from '../../functions/api/routes';
import { routeKey } from '../../lib/http-api';
import { parseStageConfig } from '../../lib/stage-config';
import { CDK_CONTEXT, logicalId, resources, type Synthesized, synthesize } from './support';

const STAGES = CDK_CONTEXT.stages as Record<string, Record<string, unknown>>;
/** A synth of a cdk.json stage as CI runs it (`-c stage=… -c alarmEmail=…`). */
const synthStage = (stage: string, extra: Record<string, unknown> = {}) =>
  synthesize({ ...STAGES[stage], stage, alarmEmail: 'ops@example.com', ...extra });

/** Admin routes by their path, independently of the `admin` flag that drives the stack. */
const ADMIN_KEYS = ROUTES.filter((r) => r.path.startsWith('/api/v1/admin/')).map(routeKey);

function routesOf({ template }: Synthesized) {
  return Object.values(resources(template))
    .filter((r) => r.Type === 'AWS::ApiGatewayV2::Route')
    .map((r) => ({ key: String(r.Properties?.RouteKey), auth: r.Properties?.AuthorizationType }));
}

function envOf(s: Synthesized, name: string): Record<string, unknown> {
  const fn = s.stack.api.functions.get(name);
  const props = resources(s.template)[fn ? logicalId(s.stack, fn.fn) : '']?.Properties;
  return (props?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
}

describe('a production synth', () => {
  const prod = synthStage('production');
  const all = resources(prod.template);

  it('authorizes every admin route with AWS_IAM, and no other route', () => {
    expect(prod.config.adminAuth).toBe('iam');
    expect(ADMIN_KEYS.sort()).toEqual(
      ROUTES.filter((r) => r.admin)
        .map(routeKey)
        .sort(),
    );
    expect(ADMIN_KEYS.length).toBeGreaterThanOrEqual(6);
    const routes = routesOf(prod);
    expect(routes).toHaveLength(ROUTES.length);
    for (const { key, auth } of routes) {
      expect([key, auth]).toEqual([key, ADMIN_KEYS.includes(key) ? 'AWS_IAM' : 'NONE']);
    }
  });

  it('gives no function the admin key: the admin routes and get-charge get ADMIN_AUTH=iam instead', () => {
    for (const route of ROUTES) {
      const env = envOf(prod, route.name);
      expect([route.name, env.ADMIN_KEY_SECRET_ARN, env.ADMIN_AUTH]).toEqual([
        route.name,
        undefined,
        recognisesAdmin(route) ? 'iam' : undefined,
      ]);
    }
    const secret = JSON.stringify({ Ref: logicalId(prod.stack, prod.stack.data.adminKey) });
    const readers = Object.values(all).filter((r) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties).includes(secret));
    expect(readers).toEqual([]);
  });

  it('has one named managed policy allowing execute-api:Invoke on exactly the admin routes, given as an output', () => {
    const policyId = logicalId(prod.stack, prod.stack.api.adminPolicy as never);
    const policy = all[policyId]?.Properties ?? {};
    expect(policy.ManagedPolicyName).toBe('agent-payment-service-production-admin-api');
    expect(policy.Roles).toBeUndefined();
    const statements = (policy.PolicyDocument as { Statement: { Effect: string; Action: unknown; Resource: unknown[] }[] }).Statement;
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatchObject({ Effect: 'Allow', Action: 'execute-api:Invoke' });
    // Each resource is `<api>/*/<METHOD><path, {param} onwards as *>`, one per admin route.
    const apiRef = { Ref: logicalId(prod.stack, prod.stack.api.api) };
    const tails = (statements[0]?.Resource ?? []).map((arn) => {
      const parts = (arn as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1];
      expect(parts.slice(0, -1)).toEqual([
        'arn:',
        { Ref: 'AWS::Partition' },
        ':execute-api:',
        { Ref: 'AWS::Region' },
        ':',
        { Ref: 'AWS::AccountId' },
        ':',
        apiRef,
      ]);
      return parts.at(-1);
    });
    // Routes under one {param} share a resource (POST users/* is the credit and the key rotation).
    expect(tails.sort()).toEqual(
      [...new Set(ROUTES.filter((r) => r.admin).map((r) => `/*/${r.method}${r.path.replace(/\{.*?\}.*/, '*')}`))].sort(),
    );
    const outputs = prod.template.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(outputs.AdminApiPolicyArn?.Value).toEqual({ Ref: policyId });
    expect(outputs.AdminKeySecretName).toBeUndefined();
  });

  it('attaches the policy to the roles adminRoleNames names, by name', () => {
    const withRoles = synthStage('production', { adminRoleNames: 'payments-operator, oncall' });
    const policy = resources(withRoles.template)[logicalId(withRoles.stack, withRoles.stack.api.adminPolicy as never)]?.Properties;
    expect(policy?.Roles).toEqual(['payments-operator', 'oncall']);
  });

  it('records who called in the access log (the IAM principal; "-" on other routes)', () => {
    const [stage] = Object.values(all).filter((r) => r.Type === 'AWS::ApiGatewayV2::Stage');
    const format = JSON.parse(String((stage?.Properties?.AccessLogSettings as { Format: string }).Format)) as Record<string, string>;
    expect(format.caller).toBe('$context.identity.userArn');
  });
});

describe('a dev synth (adminAuth key in cdk.json)', () => {
  const dev = synthStage('dev');

  it('authorizes no route with IAM; the admin routes and get-charge read the admin key; no managed policy', () => {
    expect(dev.config.adminAuth).toBe('key');
    expect(routesOf(dev).filter((r) => r.auth !== 'NONE')).toEqual([]);
    const secret = { Ref: logicalId(dev.stack, dev.stack.data.adminKey) };
    for (const route of ROUTES) {
      const env = envOf(dev, route.name);
      expect([route.name, env.ADMIN_KEY_SECRET_ARN, env.ADMIN_AUTH]).toEqual([
        route.name,
        recognisesAdmin(route) ? secret : undefined,
        undefined,
      ]);
    }
    expect(dev.stack.api.adminPolicy).toBeUndefined();
    const outputs = dev.template.toJSON().Outputs as Record<string, unknown>;
    expect(outputs.AdminKeySecretName).toBeDefined();
    expect(outputs.AdminApiPolicyArn).toBeUndefined();
  });
});

describe('adminAuth in the stage configuration', () => {
  const base = { ...STAGES.production, stage: 'production', alarmEmail: 'ops@example.com', publicBaseUrl: 'https://pay.example.com' };

  it('defaults to iam, in staging and production too, and refuses key for production', () => {
    expect(parseStageConfig({ ...STAGES.staging, stage: 'staging' }).adminAuth).toBe('iam');
    expect(parseStageConfig(base).adminAuth).toBe('iam');
    expect(() => parseStageConfig({ ...base, adminAuth: 'key' })).toThrow(/adminAuth: production authorizes the admin routes with IAM/);
    expect(parseStageConfig({ ...STAGES.staging, stage: 'staging', adminAuth: 'key' }).adminAuth).toBe('key');
    expect(() => parseStageConfig({ ...base, adminAuth: 'open' })).toThrow(/adminAuth/);
  });

  it('reads adminRoleNames from a comma list or a JSON list, refuses ARNs, and refuses them without iam', () => {
    expect(parseStageConfig({ ...base, adminRoleNames: 'a, b' }).adminRoleNames).toEqual(['a', 'b']);
    expect(parseStageConfig({ ...base, adminRoleNames: ['ops'] }).adminRoleNames).toEqual(['ops']);
    expect(parseStageConfig(base).adminRoleNames).toEqual([]);
    expect(() => parseStageConfig({ ...base, adminRoleNames: 'arn:aws:iam::123456789012:role/ops' })).toThrow(/an IAM role name/);
    expect(() => parseStageConfig({ ...STAGES.staging, stage: 'staging', adminAuth: 'key', adminRoleNames: 'ops' })).toThrow(
      /adminRoleNames: attaches the IAM admin policy/,
    );
  });
});
