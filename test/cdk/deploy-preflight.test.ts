/**
 * The deploy's preflight (lib/deploy-preflight.ts) against the stack's own templates, with a fake
 * AWS CLI: a new account whose concurrency quota cannot take the reservations stops the deploy
 * before CloudFormation starts, saying what to do; a stage without reservations passes anywhere; a
 * stack whose first create failed loses its termination protection so CDK can replace it.
 */
import {
  type Aws,
  CONCURRENCY_QUOTA_CODE,
  concurrencyProblem,
  LAMBDA_MIN_UNRESERVED,
  preflight,
  type RoleCredentials,
  reservations,
} from '../../lib/deploy-preflight';
import { synthesize } from './support';

const templatesOf = (synthesized: ReturnType<typeof synthesize>) => synthesized.templates.map((t) => t.template.toJSON());
const STACK = 'AgentPaymentService-production';
// What cdk.json's production block reserves: the payout worker 5, webhook delivery 20, one run each for four scheduled functions.
const production = templatesOf(synthesize({ stage: 'production', workerMaxConcurrency: '5', alarmEmail: 'ops@example.com' }));
const unreserved = templatesOf(
  synthesize({ stage: 'production', workerMaxConcurrency: '5', alarmEmail: 'ops@example.com', reserveConcurrency: 'false' }),
);

describe('reserved concurrency, as the templates ask for it', () => {
  it('sums the functions that reserve: 29 in production, none with reserveConcurrency=false', () => {
    const wanted = reservations(production);
    expect(wanted.reduce((sum, r) => sum + r.reserved, 0)).toBe(29);
    expect(wanted.map((r) => r.reserved).sort((a, b) => b - a)).toEqual([20, 5, 1, 1, 1, 1]);
    expect(wanted.every((r) => r.description.length > 0)).toBe(true);
    expect(reservations(unreserved)).toEqual([]);
  });

  it('refuses an account whose unreserved concurrency above 100 is less than that, saying what to do', () => {
    const wanted = reservations(production);
    // A new account: a quota of 10.
    const problem = concurrencyProblem(STACK, wanted, [], { limit: 10, unreserved: 10 });
    expect(problem).toContain(`${STACK} reserves 29 concurrent executions`);
    expect(problem).toContain(`only 10 of its quota of 10 are unreserved`);
    expect(problem).toContain(`raise the quota to at least ${29 + LAMBDA_MIN_UNRESERVED}`);
    expect(problem).toContain(`--quota-code ${CONCURRENCY_QUOTA_CODE}`);
    expect(problem).toContain('RESERVE_CONCURRENCY=false');
    // Exactly enough, and one short.
    expect(concurrencyProblem(STACK, wanted, [], { limit: 129, unreserved: 129 })).toBeUndefined();
    expect(concurrencyProblem(STACK, wanted, [], { limit: 1000, unreserved: 128 })).toContain('at least 1001');
    // Without reservations nothing is asked of the account.
    expect(concurrencyProblem(STACK, reservations(unreserved), [], { limit: 10, unreserved: 10 })).toBeUndefined();
  });

  it('counts what the deployed stack already reserves as its own (the account figure has it taken off)', () => {
    const wanted = reservations(production);
    expect(concurrencyProblem(STACK, wanted, wanted, { limit: 129, unreserved: 100 })).toBeUndefined();
    // Growing by 10 on a full account: refused, and the message says by how much.
    const grown = wanted.map((r) => (r.reserved === 20 ? { ...r, reserved: 30 } : r));
    expect(concurrencyProblem(STACK, grown, wanted, { limit: 129, unreserved: 100 })).toContain('10 more than it does today');
  });
});

describe('preflight (a fake AWS CLI)', () => {
  const LOOKUP: RoleCredentials = { AccessKeyId: 'lookup', SecretAccessKey: 's', SessionToken: 't' };
  const DEPLOY: RoleCredentials = { AccessKeyId: 'deploy', SecretAccessKey: 's', SessionToken: 't' };
  interface Account {
    stack?: { StackStatus: string; EnableTerminationProtection?: boolean };
    deployed?: ReturnType<typeof templatesOf>;
    limit: number;
    unreserved: number;
  }
  const run = (account: Account, templates = production) => {
    const calls: { command: string; as: string }[] = [];
    const aws: Aws = (args, credentials) => {
      const command = args.slice(0, 2).join(' ');
      calls.push({ command, as: credentials?.AccessKeyId ?? 'caller' });
      switch (command) {
        case 'sts get-caller-identity':
          return { Account: '123456789012', Arn: 'arn:aws:sts::123456789012:assumed-role/agent-payment-service-deploy-production/x' };
        case 'sts assume-role': {
          const arn = args[args.indexOf('--role-arn') + 1];
          if (arn === 'arn:aws:iam::123456789012:role/cdk-hnb659fds-lookup-role-123456789012-eu-west-1') return { Credentials: LOOKUP };
          if (arn === 'arn:aws:iam::123456789012:role/cdk-hnb659fds-deploy-role-123456789012-eu-west-1') return { Credentials: DEPLOY };
          throw new Error(`unexpected role ${arn}`);
        }
        case 'cloudformation describe-stacks':
          if (!account.stack) throw new Error(`aws cloudformation describe-stacks: Stack with id ${STACK} does not exist`);
          return { Stacks: [account.stack] };
        case 'cloudformation list-stack-resources':
          return (account.deployed ?? []).slice(1).map((_, i) => `arn:aws:cloudformation:eu-west-1:123456789012:stack/nested-${i}/x`);
        case 'cloudformation get-template': {
          const name = args[args.indexOf('--stack-name') + 1] ?? '';
          const i = name === STACK ? 0 : Number(/nested-(\d+)/.exec(name)?.[1]) + 1;
          return account.deployed?.[i];
        }
        case 'lambda get-account-settings':
          return { AccountLimit: { ConcurrentExecutions: account.limit, UnreservedConcurrentExecutions: account.unreserved } };
        case 'cloudformation update-termination-protection':
          return { StackId: STACK };
        default:
          throw new Error(`unexpected aws ${args.join(' ')}`);
      }
    };
    const lines: string[] = [];
    let error: string | undefined;
    try {
      preflight({ stackName: STACK, region: 'eu-west-1', templates, aws, log: (line) => lines.push(line) });
    } catch (e) {
      error = e instanceof Error ? e.message : String(e);
    }
    return { calls, lines, error };
  };

  it('lets a first deploy start in an account with room, reading everything through the lookup role', () => {
    const { calls, lines, error } = run({ limit: 1000, unreserved: 1000 });
    expect(error).toBeUndefined();
    expect(lines.join('\n')).toContain(
      `${STACK}: not deployed yet; reserves 29 concurrent executions (today 0); account in eu-west-1: quota 1000`,
    );
    expect(
      calls.filter((c) => c.command.startsWith('cloudformation') || c.command.startsWith('lambda')).every((c) => c.as === 'lookup'),
    ).toBe(true);
    expect(calls.map((c) => c.command)).not.toContain('cloudformation update-termination-protection');
  });

  it('stops a first deploy in a new account (quota 10) before CloudFormation starts; without reservations it goes', () => {
    expect(run({ limit: 10, unreserved: 10 }).error).toMatch(/reserves 29 concurrent executions.*RESERVE_CONCURRENCY=false/);
    expect(run({ limit: 10, unreserved: 10 }, unreserved).error).toBeUndefined();
  });

  it('credits an update with what the deployed stack (parent and nested stacks) reserves today', () => {
    const { calls, error } = run({ stack: { StackStatus: 'UPDATE_COMPLETE' }, deployed: production, limit: 129, unreserved: 100 });
    expect(error).toBeUndefined();
    expect(calls.filter((c) => c.command === 'cloudformation get-template')).toHaveLength(production.length);
  });

  it('turns termination protection off on a stack whose first create failed (it holds nothing; CDK replaces it), as the deploy role', () => {
    for (const StackStatus of ['ROLLBACK_COMPLETE', 'ROLLBACK_FAILED']) {
      const { calls, lines, error } = run({ stack: { StackStatus, EnableTerminationProtection: true }, limit: 1000, unreserved: 1000 });
      expect(error).toBeUndefined();
      expect(calls).toContainEqual({ command: 'cloudformation update-termination-protection', as: 'deploy' });
      // Nothing of the failed stack counts as reserved: it is deleted before the create.
      expect(calls.map((c) => c.command)).not.toContain('cloudformation get-template');
      expect(lines.join('\n')).toContain('termination protection turned off');
    }
    // Never on a stack that deployed, and never before the concurrency check passed.
    const live = run({
      stack: { StackStatus: 'UPDATE_ROLLBACK_COMPLETE', EnableTerminationProtection: true },
      deployed: production,
      limit: 1000,
      unreserved: 971,
    });
    expect(live.calls.map((c) => c.command)).not.toContain('cloudformation update-termination-protection');
    const short = run({ stack: { StackStatus: 'ROLLBACK_COMPLETE', EnableTerminationProtection: true }, limit: 10, unreserved: 10 });
    expect(short.error).toBeDefined();
    expect(short.calls.map((c) => c.command)).not.toContain('cloudformation update-termination-protection');
  });
});
