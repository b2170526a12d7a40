/**
 * The deploy's preflight (.github/workflows/deploy-stage.yml, between the synth and `cdk deploy`,
 * run by bin/deploy-preflight.ts): what would make CloudFormation fail, or a retry stop, found before
 * it starts, each with what to do (docs/operating/first-deploy.md "First deploy").
 *
 * 1. **Reserved concurrency.** Lambda refuses a reservation that would leave the account fewer than
 *    100 unreserved concurrent executions, and a new account's quota may be 10: the deploy would fail
 *    at the first reserved function, after minutes of creating the rest. So the reservations of the
 *    synthesized templates, less those the deployed stack already holds (the account's unreserved
 *    figure has them taken off already), must fit in what is unreserved above 100.
 * 2. **A failed first create.** A stack left in ROLLBACK_COMPLETE (or ROLLBACK_FAILED) holds nothing:
 *    CDK deletes it and creates it again, and production's termination protection (bin/app.ts; CDK
 *    sets it before the first create runs) would refuse that delete. The preflight turns protection
 *    off on that stack alone; the deploy turns it on again.
 *
 * Reads go through the CDK bootstrap's lookup role (ReadOnlyAccess), the one write through its
 * deploy role (the one CDK itself uses for UpdateTerminationProtection): the GitHub deploy role may
 * assume both and holds no permission of its own (docs/operating/first-deploy.md "One-time: bootstrap and the deploy role").
 * The AWS CLI does the calls (`Aws`), so this file is tested with a fake one.
 */

/** Lambda keeps this many of the account's concurrent executions unreserved, whatever is reserved. */
export const LAMBDA_MIN_UNRESERVED = 100;
/** The CDK bootstrap's default qualifier, as in its role names (docs/operating/first-deploy.md uses the same). */
export const BOOTSTRAP_QUALIFIER = 'hnb659fds';
/** Lambda's "Concurrent executions" quota, for the quota increase request. */
export const CONCURRENCY_QUOTA_CODE = 'L-B99A9384';

/** Statuses of a stack whose first create failed: CDK deletes it before creating it again. */
const CREATE_FAILED = ['ROLLBACK_COMPLETE', 'ROLLBACK_FAILED'];

export interface RoleCredentials {
  AccessKeyId: string;
  SecretAccessKey: string;
  SessionToken: string;
}

/** One AWS CLI call (`aws <args> --output json`), as the given role or the caller; its JSON output, parsed. */
export type Aws = (args: string[], credentials?: RoleCredentials) => unknown;

type TemplateJson = { Resources?: Record<string, { Type: string; Properties?: Record<string, unknown> }> };

export interface Reservation {
  /** The function's logical id. */
  id: string;
  description: string;
  reserved: number;
}

/** The functions of these templates that reserve concurrency, and how much. */
export function reservations(templates: readonly TemplateJson[]): Reservation[] {
  return templates.flatMap((template) =>
    Object.entries(template.Resources ?? {}).flatMap(([id, resource]) => {
      const reserved = resource.Properties?.ReservedConcurrentExecutions;
      if (resource.Type !== 'AWS::Lambda::Function' || typeof reserved !== 'number') return [];
      const description = typeof resource.Properties?.Description === 'string' ? resource.Properties.Description : id;
      return [{ id, description, reserved }];
    }),
  );
}

const total = (list: readonly Reservation[]) => list.reduce((sum, r) => sum + r.reserved, 0);

export interface AccountConcurrency {
  /** The account's quota in the region (AccountLimit.ConcurrentExecutions). */
  limit: number;
  /** What no function has reserved (AccountLimit.UnreservedConcurrentExecutions). */
  unreserved: number;
}

/**
 * Why the account cannot take the stack's reservations, or undefined when it can. `deployed` is what
 * the stack reserves today (0 before its first deploy): already taken off `unreserved`.
 */
export function concurrencyProblem(
  stackName: string,
  wanted: readonly Reservation[],
  deployed: readonly Reservation[],
  account: AccountConcurrency,
): string | undefined {
  const increase = total(wanted) - total(deployed);
  const room = account.unreserved - LAMBDA_MIN_UNRESERVED;
  if (increase <= 0 || increase <= room) return undefined;
  const neededLimit = account.limit + (increase - room);
  // A function's description up to its first colon names it ("Payout worker: pays withdrawals …").
  const list = wanted.map((r) => `${r.description.split(':')[0]?.trim()} ${r.reserved}`).join(', ');
  return [
    `${stackName} reserves ${total(wanted)} concurrent executions (${list})${total(deployed) > 0 ? `, ${increase} more than it does today` : ''},`,
    `but Lambda keeps ${LAMBDA_MIN_UNRESERVED} of the account's unreserved and only ${account.unreserved} of its quota of ${account.limit} are unreserved:`,
    `the deploy would fail at the first reserved function. Either raise the quota to at least ${neededLimit}`,
    `(aws service-quotas request-service-quota-increase --service-code lambda --quota-code ${CONCURRENCY_QUOTA_CODE} --desired-value 1000,`,
    "1000 being an established account's default; granted within hours to days), or deploy without reservations: set the variable RESERVE_CONCURRENCY=false",
    'in this GitHub environment (-c reserveConcurrency=false by hand) until then. docs/deploy.md "Throttles and reserved concurrency".',
  ].join(' ');
}

export interface PreflightInput {
  stackName: string;
  region: string;
  /** Every template of the synthesized cloud assembly (the parent and its nested stacks). */
  templates: readonly TemplateJson[];
  aws: Aws;
  log: (line: string) => void;
}

interface StackDescription {
  StackStatus: string;
  EnableTerminationProtection?: boolean;
}

const isMissing = (error: unknown) => error instanceof Error && /does not exist/.test(error.message);

/** Runs the checks; throws an Error whose message says what to do when the deploy must not start. */
export function preflight(input: PreflightInput): void {
  const { stackName, region, aws, log } = input;
  const identity = aws(['sts', 'get-caller-identity']) as { Account: string; Arn: string };
  const partition = identity.Arn.split(':')[1] ?? 'aws';
  const role = (kind: 'lookup' | 'deploy') =>
    `arn:${partition}:iam::${identity.Account}:role/cdk-${BOOTSTRAP_QUALIFIER}-${kind}-role-${identity.Account}-${region}`;
  const assume = (kind: 'lookup' | 'deploy') =>
    (
      aws(['sts', 'assume-role', '--role-arn', role(kind), '--role-session-name', `preflight-${kind}`]) as {
        Credentials: RoleCredentials;
      }
    ).Credentials;
  const lookup = assume('lookup');

  let stack: StackDescription | undefined;
  try {
    stack = (aws(['cloudformation', 'describe-stacks', '--stack-name', stackName], lookup) as { Stacks: StackDescription[] }).Stacks[0];
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
  const failedCreate = stack !== undefined && CREATE_FAILED.includes(stack.StackStatus);
  // A failed create's stack is deleted before the new create: it reserves nothing that counts.
  const deployed = stack && !failedCreate ? reservations(deployedTemplates(aws, stackName, lookup)) : [];
  const wanted = reservations(input.templates);
  const settings = aws(['lambda', 'get-account-settings'], lookup) as {
    AccountLimit: { ConcurrentExecutions: number; UnreservedConcurrentExecutions: number };
  };
  const account = { limit: settings.AccountLimit.ConcurrentExecutions, unreserved: settings.AccountLimit.UnreservedConcurrentExecutions };
  log(
    `${stackName}: ${stack ? stack.StackStatus : 'not deployed yet'}; reserves ${total(wanted)} concurrent executions ` +
      `(today ${total(deployed)}); account in ${region}: quota ${account.limit}, unreserved ${account.unreserved}`,
  );
  const problem = concurrencyProblem(stackName, wanted, deployed, account);
  if (problem) throw new Error(problem);

  if (failedCreate && stack?.EnableTerminationProtection) {
    aws(
      ['cloudformation', 'update-termination-protection', '--no-enable-termination-protection', '--stack-name', stackName],
      assume('deploy'),
    );
    log(
      `${stackName} is ${stack.StackStatus} (its first create failed; it holds nothing): termination protection turned off so CDK can replace it; the deploy turns it on again`,
    );
  }
}

/** The templates CloudFormation holds for the stack and each of its nested stacks. */
function deployedTemplates(aws: Aws, stackName: string, credentials: RoleCredentials): TemplateJson[] {
  const template = (name: string) => {
    const body = aws(['cloudformation', 'get-template', '--stack-name', name, '--query', 'TemplateBody'], credentials);
    return (typeof body === 'string' ? JSON.parse(body) : body) as TemplateJson;
  };
  const nested = aws(
    [
      'cloudformation',
      'list-stack-resources',
      '--stack-name',
      stackName,
      '--query',
      "StackResourceSummaries[?ResourceType=='AWS::CloudFormation::Stack'].PhysicalResourceId",
    ],
    credentials,
  ) as (string | null)[];
  return [template(stackName), ...nested.filter((arn): arn is string => typeof arn === 'string').map(template)];
}
