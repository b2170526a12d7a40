/**
 * cdk-nag's AWS Solutions pack over the whole app (bin/app.ts runs the same pack on every synth
 * and a finding fails it). Acknowledgements are pinned: each sits on the resource concerned,
 * never on the stack or the app, and says why.
 */
import { App, type CfnResource, Stack, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { ROUTES } from '../../functions/api/routes';
import { AgentPaymentServiceStack } from '../../lib/agent-payment-service-stack';
import { parseStageConfig } from '../../lib/stage-config';
import { CDK_CONTEXT, synthesize, TEST_STAGE_CONFIG } from './support';

const { app } = synthesize({ alarmEmail: 'ops@example.com' });

interface Acknowledgement {
  path: string;
  id: string;
  reason: string;
}

function acknowledgements(): Acknowledgement[] {
  return app.node.findAll().flatMap((construct) =>
    construct.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) =>
        Object.entries(entry.data as Record<string, string>).map(([id, reason]) => ({
          path: construct.node.path,
          id: id.replace(/^annotation::/i, ''),
          reason,
        })),
      ),
  );
}

/**
 * Runs the pack once, recording each finding an acknowledgement silenced ("<resource path> <rule>").
 * cdk-nag asks `isAcknowledged` only for a finding it has raised, so an acknowledgement that no
 * recorded finding falls under is one cdk-nag never raises: dead text that would also hide a
 * future real finding of that rule.
 */
function runPack(): { findings: string[]; silenced: { path: string; id: string }[] } {
  const pack = new AwsSolutionsChecks();
  type Ack = { isAcknowledged(resource: CfnResource, ruleId: string): boolean };
  const original = (pack as unknown as Ack).isAcknowledged.bind(pack);
  const silenced: { path: string; id: string }[] = [];
  (pack as unknown as Ack).isAcknowledged = (resource, ruleId) => {
    const acknowledged = original(resource, ruleId);
    if (acknowledged) silenced.push({ path: resource.node.path, id: ruleId });
    return acknowledged;
  };
  const report = pack.validateScope(app);
  const findings = report.violations.map((v) => `${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath).join(', ')}`);
  return { findings, silenced };
}

const run = runPack();

describe('cdk-nag (AWS Solutions)', () => {
  it('finds nothing that is not acknowledged', () => {
    expect(run.findings).toEqual([]);
  });

  it('has no acknowledgement cdk-nag never raises (each silences a finding on its resource or below)', () => {
    expect(run.silenced.length).toBeGreaterThan(0);
    const unused = acknowledgements().filter(
      (ack) => !run.silenced.some((s) => s.id === ack.id && (s.path === ack.path || s.path.startsWith(`${ack.path}/`))),
    );
    expect(unused.map((a) => `${a.id} ${a.path}`)).toEqual([]);
  });

  it('acknowledges only these findings, each on the resource it concerns, none stack- or app-wide', () => {
    const acks = acknowledgements();
    const count = (id: string) => acks.filter((a) => a.id === id).length;
    // Admin routes are IAM-authorized (adminAuth defaults to iam): APIG4 is raised, and acknowledged, on the others only.
    expect(count('AwsSolutions-APIG4')).toBe(ROUTES.filter((r) => !r.admin).length);
    expect(acks.filter((a) => a.id === 'AwsSolutions-APIG4').every((a) => /\/Http\/\w+Route$/.test(a.path))).toBe(true);
    // The admin policy's route ARNs, one finding per wildcard resource, on the policy itself.
    const wildcards = acks.filter((a) => a.id.startsWith('AwsSolutions-IAM5['));
    expect(wildcards).toHaveLength(ROUTES.filter((r) => r.admin).length);
    expect(wildcards.every((a) => a.path === 'AgentPaymentService-test/Http/AdminApiInvoke')).toBe(true);
    expect(wildcards.every((a) => a.id.includes(':execute-api:') && a.id.includes('/api/v1/admin/'))).toBe(true);
    expect(acks.filter((a) => a.id !== 'AwsSolutions-APIG4').map((a) => `${a.id} ${a.path}`)).toEqual(
      expect.arrayContaining([
        'AwsSolutions-SMG4 AgentPaymentService-test/Data/AdminKey',
        'AwsSolutions-SMG4 AgentPaymentService-test/Data/ApprovalSecret',
        'AwsSolutions-SMG4 AgentPaymentService-test/Data/SolanaHotWallet',
        'AwsSolutions-SMG4 AgentPaymentService-test/Data/SolanaRpcUrl',
        'AwsSolutions-SMG4 AgentPaymentService-test/Data/PaypalCredentials',
        'AwsSolutions-SQS3 AgentPaymentService-test/Webhooks/StreamFailureQueue',
        'AwsSolutions-SQS3 AgentPaymentService-test/KillSwitch/StreamFailureQueue',
      ]),
    );
    expect(acks).toHaveLength(ROUTES.length + 8);
    for (const ack of acks) {
      const construct = app.node.findChild(ack.path.split('/')[0] ?? '');
      expect(construct).toBeInstanceOf(Stack);
      expect(ack.path.split('/').length).toBeGreaterThan(1);
    }
  });

  it('finds nothing unacknowledged where the stage takes the admin key instead (APIG4 acknowledged on every route)', () => {
    const keyed = synthesize({ alarmEmail: 'ops@example.com', adminAuth: 'key' });
    const report = new AwsSolutionsChecks().validateScope(keyed.app);
    expect(report.violations.map((v) => v.ruleName)).toEqual([]);
  });

  it('finds nothing unacknowledged in a stack pinned to an account and region (route ARNs then hold them literally)', () => {
    // What bin/app.ts builds with deploying credentials (CDK_DEFAULT_ACCOUNT/REGION) or a stage's account/region.
    const pinned = new App({ context: { ...CDK_CONTEXT, 'aws:cdk:bundling-stacks': [] }, builtinCloudFormationValidation: false });
    new AgentPaymentServiceStack(pinned, 'AgentPaymentService-test', {
      config: parseStageConfig({ ...TEST_STAGE_CONFIG, alarmEmail: 'ops@example.com' }),
      env: { account: '123456789012', region: 'eu-west-1' },
    });
    const report = new AwsSolutionsChecks().validateScope(pinned);
    expect(report.violations.map((v) => v.ruleName)).toEqual([]);
  });

  it('finds nothing unacknowledged on a custom domain, nor without a public address (links to the API)', () => {
    const custom = synthesize({
      alarmEmail: 'ops@example.com',
      publicBaseUrl: undefined,
      domainName: 'pay.example.com',
      certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/0a1b2c3d-4e5f-6789-abcd-ef0123456789',
    });
    expect(new AwsSolutionsChecks().validateScope(custom.app).violations.map((v) => v.ruleName)).toEqual([]);
  });

  it('gives every acknowledgement a specific reason', () => {
    for (const ack of acknowledgements()) {
      expect([ack.id, ack.reason.length >= 80]).toEqual([ack.id, true]);
    }
  });
});
