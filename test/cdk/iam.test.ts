/**
 * Least privilege, pinned: every function's role must carry exactly the statements listed here,
 * written out by hand rather than derived from lib/, so any widening (a new action, a wildcard,
 * another resource, a managed policy) fails this file and has to be reviewed.
 */
import { ROUTES, recognisesAdmin } from '../../functions/api/routes';
import { ROUTE_INDEXES } from '../../lib/http-api';
import type { ServiceFunction } from '../../lib/service-function';
import { logicalId, resources, synthesize } from './support';

const { stack, template } = synthesize();
const all = resources(template);

/** What a statement may be granted on, by name. */
type Grant =
  | 'logs'
  | 'table-read'
  | 'table-read-gsi2'
  | 'table-write'
  | 'queue-send'
  | 'queue-consume'
  | 'admin-secret'
  | 'approval-secret'
  | 'rail-secrets'
  | 'hot-wallet-key'
  | 'paypal-credentials'
  | 'paypal-credentials-and-webhook-id'
  | 'rpc-url-and-paypal-credentials'
  | 'rpc-url'
  | 'approval-secret-and-rpc-url'
  | 'table-stream'
  | 'table-scan'
  | 'webhook-and-stream-failure-queue-send'
  | 'webhook-queue-consume'
  | 'webhook-key-encrypt'
  | 'webhook-key-decrypt';

/** Per function: the grants it needs. Change this table only together with the code that needs it. */
const EXPECTED: Record<string, Grant[]> = {
  'register-agent': ['logs', 'table-write'],
  'create-charge': ['logs', 'table-read', 'table-write', 'approval-secret'],
  'list-charges': ['logs', 'table-read'],
  // Admin routes and get-charge read no admin key where API Gateway authorizes the operator with IAM
  // (the default adminAuth); under `key` they read it (test/cdk/admin-auth.test.ts).
  'get-charge': ['logs', 'table-read'],
  'get-balance': ['logs', 'table-read'],
  // The RPC URL secret: a USDC withdrawal asks the chain whether the wallet has its token account.
  withdraw: ['logs', 'table-read', 'table-write', 'queue-send', 'rpc-url'],
  'list-withdrawals': ['logs', 'table-read'],
  // The charge lifecycle: one read of what they act on, one transaction (with the kill switch).
  'capture-charge': ['logs', 'table-read', 'table-write'],
  'release-charge': ['logs', 'table-read', 'table-write'],
  'refund-charge': ['logs', 'table-read', 'table-write'],
  'rotate-agent-key': ['logs', 'table-read', 'table-write'],
  'admin-create-user': ['logs', 'table-write'],
  'admin-credit-user': ['logs', 'table-read', 'table-write'],
  'admin-get-user': ['logs', 'table-read'],
  'admin-update-agent': ['logs', 'table-read', 'table-write'],
  'admin-get-agent': ['logs', 'table-read'],
  'admin-get-charge': ['logs', 'table-read'],
  'user-me': ['logs', 'table-read'],
  // The user's history across agents is the one reader of GSI2.
  'user-list-charges': ['logs', 'table-read-gsi2'],
  'user-get-policy': ['logs', 'table-read'],
  'user-put-policy': ['logs', 'table-read', 'table-write'],
  'user-approve-charge': ['logs', 'table-read', 'table-write'],
  'user-decline-charge': ['logs', 'table-read', 'table-write'],
  'user-rotate-key': ['logs', 'table-read', 'table-write'],
  // The approval page checks its link's token against the approval secret.
  'approval-page': ['logs', 'table-read', 'approval-secret'],
  'approval-decide': ['logs', 'table-read', 'table-write', 'approval-secret'],
  health: ['logs', 'table-read'],
  openapi: ['logs'],
  // The remote MCP server runs the wrapped use cases in-process: charges and withdrawals included.
  mcp: ['logs', 'table-read', 'table-write', 'queue-send', 'approval-secret-and-rpc-url'],
  'not-found': ['logs'],
  'payout-worker': ['logs', 'table-read', 'table-write', 'queue-consume', 'rail-secrets', 'hot-wallet-key'],
  reconciler: ['logs', 'table-read', 'table-write', 'queue-send', 'rail-secrets', 'hot-wallet-key'],
  // Due pending markers through GSI1, one transaction per expiry; no queue, no secret.
  sweeper: ['logs', 'table-read', 'table-write'],
  // Top-ups: opening one may create a PayPal order; the webhook verifies with PayPal and captures.
  'user-create-topup': ['logs', 'table-read', 'table-write', 'paypal-credentials'],
  'user-list-topups': ['logs', 'table-read'],
  'user-get-topup': ['logs', 'table-read'],
  'paypal-webhook': ['logs', 'table-read', 'table-write', 'paypal-credentials-and-webhook-id'],
  // Reads the chain (the RPC URL secret) and drives PayPal orders; never the hot wallet.
  'topup-watcher': ['logs', 'table-read', 'table-write', 'rpc-url-and-paypal-credentials'],
  // The daily audit reads the whole table: the one Scan grant (the table itself, no index), and no write.
  'ledger-audit': ['logs', 'table-read', 'table-scan'],
  // Webhooks: only the create routes seal secrets (Encrypt), only the delivery worker opens them (Decrypt).
  'agent-webhooks-create': ['logs', 'table-read', 'table-write', 'webhook-key-encrypt'],
  'agent-webhooks-list': ['logs', 'table-read'],
  'agent-webhooks-delete': ['logs', 'table-read', 'table-write'],
  'agent-webhooks-deliveries': ['logs', 'table-read'],
  'agent-webhooks-test': ['logs', 'table-read', 'table-write'],
  'user-webhooks-create': ['logs', 'table-read', 'table-write', 'webhook-key-encrypt'],
  'user-webhooks-list': ['logs', 'table-read'],
  'user-webhooks-delete': ['logs', 'table-read', 'table-write'],
  'user-webhooks-deliveries': ['logs', 'table-read'],
  'user-webhooks-test': ['logs', 'table-read', 'table-write'],
  // Its stream event source mapping leaves the batches it gives up on in the failure queue, as the function's role.
  'webhook-dispatcher': ['logs', 'table-read', 'table-stream', 'webhook-and-stream-failure-queue-send'],
  // The approval secret: charge.approval_requested's link token is derived at delivery, never stored.
  'webhook-delivery': ['logs', 'table-read', 'table-write', 'webhook-queue-consume', 'webhook-key-decrypt', 'approval-secret'],
};

const table = { 'Fn::GetAtt': [logicalId(stack, stack.data.table), 'Arn'] };
const queue = { 'Fn::GetAtt': [logicalId(stack, stack.pipeline.queue), 'Arn'] };
const secret = (s: { node: { defaultChild?: unknown } }) => ({ Ref: logicalId(stack, s) });
const webhookQueue = { 'Fn::GetAtt': [logicalId(stack, stack.webhooks.queue), 'Arn'] };
const webhookKey = { 'Fn::GetAtt': [logicalId(stack, stack.data.webhookSecretsKey), 'Arn'] };
const webhookContext = { StringEquals: { 'kms:EncryptionContext:service': 'agent-payment-service' } };

/** The exact statement (actions sorted) each grant stands for. */
function statement(grant: Grant, fn: ServiceFunction): { actions: string[]; resources: unknown[]; condition?: unknown } {
  switch (grant) {
    case 'logs':
      return {
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [{ 'Fn::GetAtt': [logicalId(stack, fn.logGroup), 'Arn'] }],
      };
    case 'table-read':
      return {
        actions: ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query'],
        resources: [table, { 'Fn::Join': ['', [table, '/index/GSI1']] }],
      };
    case 'table-read-gsi2':
      return {
        actions: ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query'],
        resources: [table, { 'Fn::Join': ['', [table, '/index/GSI1']] }, { 'Fn::Join': ['', [table, '/index/GSI2']] }],
      };
    case 'table-scan':
      return { actions: ['dynamodb:Scan'], resources: [table] };
    case 'table-write':
      return {
        actions: ['dynamodb:ConditionCheckItem', 'dynamodb:DeleteItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
        resources: [table],
      };
    case 'queue-send':
      return { actions: ['sqs:SendMessage'], resources: [queue] };
    case 'queue-consume':
      return { actions: ['sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:ReceiveMessage'], resources: [queue] };
    case 'admin-secret':
      return { actions: ['secretsmanager:GetSecretValue'], resources: [secret(stack.data.adminKey)] };
    case 'approval-secret':
      return { actions: ['secretsmanager:GetSecretValue'], resources: [secret(stack.data.approvalSecret)] };
    case 'rail-secrets':
      return {
        actions: ['secretsmanager:GetSecretValue'],
        resources: [secret(stack.data.solanaHotWallet), secret(stack.data.solanaRpcUrl), secret(stack.data.paypalCredentials)],
      };
    case 'paypal-credentials':
      return { actions: ['secretsmanager:GetSecretValue'], resources: [secret(stack.data.paypalCredentials)] };
    case 'paypal-credentials-and-webhook-id':
      return {
        actions: ['secretsmanager:GetSecretValue'],
        resources: [secret(stack.data.paypalCredentials), secret(stack.data.paypalWebhookId)],
      };
    case 'rpc-url-and-paypal-credentials':
      return {
        actions: ['secretsmanager:GetSecretValue'],
        resources: [secret(stack.data.solanaRpcUrl), secret(stack.data.paypalCredentials)],
      };
    case 'rpc-url':
      return { actions: ['secretsmanager:GetSecretValue'], resources: [secret(stack.data.solanaRpcUrl)] };
    case 'approval-secret-and-rpc-url':
      return {
        actions: ['secretsmanager:GetSecretValue'],
        resources: [secret(stack.data.approvalSecret), secret(stack.data.solanaRpcUrl)],
      };
    case 'table-stream':
      return {
        actions: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator', 'dynamodb:ListStreams'],
        resources: [{ 'Fn::GetAtt': [logicalId(stack, stack.data.table), 'StreamArn'] }],
      };
    case 'webhook-and-stream-failure-queue-send':
      return {
        actions: ['sqs:SendMessage'],
        resources: [webhookQueue, { 'Fn::GetAtt': [logicalId(stack, stack.webhooks.streamFailureQueue), 'Arn'] }],
      };
    case 'webhook-queue-consume':
      // ChangeMessageVisibility: a failed delivery's next attempt is scheduled by pushing its message out.
      return {
        actions: ['sqs:ChangeMessageVisibility', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:ReceiveMessage'],
        resources: [webhookQueue],
      };
    case 'webhook-key-encrypt':
      return { actions: ['kms:Encrypt'], resources: [webhookKey], condition: webhookContext };
    case 'webhook-key-decrypt':
      return { actions: ['kms:Decrypt'], resources: [webhookKey], condition: webhookContext };
    case 'hot-wallet-key':
      // The hot wallet's customer-managed key, and only through Secrets Manager.
      return {
        actions: ['kms:Decrypt'],
        resources: [{ 'Fn::GetAtt': [logicalId(stack, stack.data.hotWalletKey), 'Arn'] }],
        condition: {
          StringEquals: { 'kms:ViaService': { 'Fn::Join': ['', ['secretsmanager.', { Ref: 'AWS::Region' }, '.amazonaws.com']] } },
        },
      };
  }
}

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: unknown;
  NotAction?: unknown;
  NotResource?: unknown;
}

const asArray = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);
/** Order carries no meaning in IAM (and the minimizePolicies flag reorders). */
const sortedResources = (values: unknown[]) => [...values].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

/** Every statement of every inline policy attached to the role, normalised. */
function statementsOf(roleId: string, template = all) {
  return Object.values(template)
    .filter((r) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties?.Roles) === JSON.stringify([{ Ref: roleId }]))
    .flatMap((p) => (p.Properties?.PolicyDocument as { Statement: Statement[] }).Statement)
    .map((s) => {
      expect(s.Effect).toBe('Allow');
      expect(s.NotAction ?? s.NotResource).toBeUndefined();
      return {
        actions: asArray(s.Action).sort(),
        resources: sortedResources(asArray(s.Resource)),
        ...(s.Condition ? { condition: s.Condition } : {}),
      };
    });
}

const functions: [string, ServiceFunction][] = [
  ...stack.api.functions.entries(),
  ['payout-worker', stack.pipeline.worker],
  ['reconciler', stack.pipeline.reconciler],
  ['sweeper', stack.sweeper.fn],
  ['topup-watcher', stack.topupWatcher.fn],
  ['webhook-dispatcher', stack.webhooks.dispatcher],
  ['webhook-delivery', stack.webhooks.delivery],
  ['ledger-audit', stack.ledgerAudit.fn],
];

describe('IAM', () => {
  it('has an expectation for every function, and a function for every expectation', () => {
    expect(functions.map(([name]) => name).sort()).toEqual(Object.keys(EXPECTED).sort());
    expect(ROUTES.every((r) => r.name in EXPECTED)).toBe(true);
  });

  it('names only existing routes as readers of an index beyond GSI1', () => {
    expect(Object.keys(ROUTE_INDEXES).filter((name) => !ROUTES.some((r) => r.name === name))).toEqual([]);
    expect(Object.keys(ROUTE_INDEXES).every((name) => ROUTES.find((r) => r.name === name)?.table.includes('read'))).toBe(true);
  });

  it('lets only the routes marked approvalSecret and the webhook delivery worker read the approval secret, and nothing else at all', () => {
    const readers = functions.filter(([name]) => EXPECTED[name]?.some((g) => g.startsWith('approval-secret'))).map(([name]) => name);
    // The delivery worker derives charge.approval_requested's link token (never stored) before signing.
    expect(readers.sort()).toEqual([...ROUTES.filter((r) => r.approvalSecret).map((r) => r.name), 'webhook-delivery'].sort());
    expect(readers).toContain('create-charge');
    const arn = JSON.stringify(secret(stack.data.approvalSecret));
    const policies = Object.values(all).filter((r) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties).includes(arn));
    expect(policies).toHaveLength(readers.length);
  });

  it.each(functions)('grants %s exactly the statements it needs', (name, fn) => {
    const roleId = logicalId(stack, fn.role);
    const actual = statementsOf(roleId);
    const expected = (EXPECTED[name] ?? []).map((grant) => {
      const { actions, resources, condition } = statement(grant, fn);
      return { actions, resources: sortedResources(resources), ...(condition ? { condition } : {}) };
    });
    expect(actual).toHaveLength(expected.length);
    expect(actual).toEqual(expect.arrayContaining(expected));
  });

  it.each(functions)('gives %s its own role, assumable only by Lambda, with no managed policy', (_name, fn) => {
    const roleId = logicalId(stack, fn.role);
    expect(all[fn.fn.node.defaultChild ? logicalId(stack, fn.fn) : '']?.Properties?.Role).toEqual({ 'Fn::GetAtt': [roleId, 'Arn'] });
    const role = all[roleId]?.Properties ?? {};
    expect(role.AssumeRolePolicyDocument).toEqual({
      Version: '2012-10-17',
      Statement: [{ Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' } }],
    });
    expect(role.Policies).toBeUndefined();
    expect(role.ManagedPolicyArns).toBeUndefined();
  });

  it('lets only the daily ledger audit Scan the table', () => {
    const scanners = Object.values(all).filter(
      (r) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties).includes('dynamodb:Scan'),
    );
    expect(scanners.map((p) => p.Properties?.Roles)).toEqual([[{ Ref: logicalId(stack, stack.ledgerAudit.fn.role) }]]);
  });

  it("has one managed policy, the operators' execute-api:Invoke on the admin routes, and no X-Ray grant (tracing is off: docs/deploy.md)", () => {
    // Its statement is pinned in test/cdk/admin-auth.test.ts; no function role carries it.
    expect(
      Object.entries(all)
        .filter(([, r]) => r.Type === 'AWS::IAM::ManagedPolicy')
        .map(([id]) => id),
    ).toEqual([logicalId(stack, stack.api.adminPolicy as never)]);
    expect(JSON.stringify(all)).not.toContain('xray:');
  });

  it('has no wildcard action and no wildcard resource in any function policy', () => {
    const policies = Object.values(all).filter((r) => r.Type === 'AWS::IAM::Policy');
    for (const policy of policies) {
      for (const s of (policy.Properties?.PolicyDocument as { Statement: Statement[] }).Statement) {
        for (const action of asArray(s.Action)) expect(action).not.toContain('*');
        expect(JSON.stringify(s.Resource)).not.toContain('*');
      }
    }
  });
});

describe("IAM under adminAuth key (npm start's scheme, deployed)", () => {
  const keyed = synthesize({ adminAuth: 'key' });
  const keyedAll = resources(keyed.template);

  it.each(
    ROUTES.map((r) => [r.name, r] as const),
  )('grants %s its statements, plus the admin key where it recognises the operator', (name, route) => {
    const fn = keyed.stack.api.functions.get(name);
    if (!fn) throw new Error(`no function for ${name}`);
    const expected = [...(EXPECTED[name] ?? []), ...(recognisesAdmin(route) ? (['admin-secret'] as const) : [])].map((grant) => {
      // Same construct paths, so the same logical ids as the default synth's.
      const { actions, resources, condition } = statement(grant, fn);
      return { actions, resources: sortedResources(resources), ...(condition ? { condition } : {}) };
    });
    const actual = statementsOf(logicalId(keyed.stack, fn.role), keyedAll);
    expect(actual).toHaveLength(expected.length);
    expect(actual).toEqual(expect.arrayContaining(expected));
  });

  it('has no managed policy: nobody is granted execute-api:Invoke', () => {
    expect(Object.values(keyedAll).filter((r) => r.Type === 'AWS::IAM::ManagedPolicy')).toEqual([]);
    expect(keyed.stack.api.adminPolicy).toBeUndefined();
  });
});
