/**
 * Writes bin/local/environments.generated.json from the synthesized stack: for each of its Lambda
 * functions, the names of the variables it is given and which of them name a secret or a KMS key
 * its role may use. The local stack runs each function with those alone (bin/local/function-environments.ts),
 * so a function whose stack entry forgets a secret fails its tests as it would fail on AWS, instead
 * of reading one the test environment gave every function (issue 38: the console and the approval
 * secret). `npm run docs` writes it; test/cdk/environments.test.ts fails when it is stale.
 *
 * The stage synthesized is `dev` (adminAuth `key`, as `npm start` runs) with every optional
 * address set (hot wallet, deposit wallet, a custom domain), so every variable the stack can give
 * a function shows.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AgentPaymentServiceStack } from '../../lib/agent-payment-service-stack';
import { PROJECT_ROOT } from '../../lib/bundling';
import { ServiceFunction } from '../../lib/service-function';
import { parseStageConfig } from '../../lib/stage-config';

export const ENVIRONMENTS_FILE = path.join(PROJECT_ROOT, 'bin', 'local', 'environments.generated.json');

/** What one function is given on AWS. */
export interface DeployedEnvironment {
  /** The variables its Lambda is given, sorted. */
  environment: string[];
  /** Those of them whose value (an ARN, a key id) is a resource its role is granted something on: a secret it may read, a key it may use. */
  granted: string[];
}

/** The addresses the synth sets so their variables show (any valid ones; locally the rails' own). */
const EVERY_OPTION = {
  hotWalletAddress: 'HotWa11etAddress1111111111111111111111111111',
  depositAddress: 'DepositWa11etAddress111111111111111111111111',
  domainName: 'pay.example.com',
  certificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/00000000-0000-0000-0000-000000000000',
  topupReturnUrl: 'https://pay.example.com/topups/done',
};

/**
 * The local name of a deployed function: a route's name (`functions/api/<name>.handler.ts`), else
 * its folder (`functions/payout-worker/handler.ts` → `payout-worker`), as the local stack names the
 * function it runs (bin/local/function-scope.ts).
 */
export function functionName(entry: string): string {
  const route = /^functions\/api\/([a-z0-9-]+)\.handler\.ts$/.exec(entry);
  if (route?.[1]) return route[1];
  const folder = /^functions\/([a-z0-9-]+)\/handler\.ts$/.exec(entry);
  if (folder?.[1]) return folder[1];
  throw new Error(`cannot name the function of ${entry}`);
}

type Json = Record<string, unknown>;
interface Statement {
  Resource?: unknown;
}

/** Each function of `stack` (and its nested stacks): what its synthesized template gives it. */
export function deployedEnvironments(stack: Stack): Record<string, DeployedEnvironment> {
  const templates = new Map<Stack, Json>();
  const templateOf = (s: Stack): Json => {
    let json = templates.get(s);
    if (!json) {
      json = Template.fromStack(s).toJSON() as Json;
      templates.set(s, json);
    }
    return json;
  };
  const out: Record<string, DeployedEnvironment> = {};
  const functions = stack.node.findAll().filter((c): c is ServiceFunction => c instanceof ServiceFunction);
  for (const fn of functions) {
    const own = Stack.of(fn.fn);
    const resources = templateOf(own).Resources as Record<string, { Type: string; Properties?: Json }>;
    const lambda = resources[own.getLogicalId(fn.fn.node.defaultChild as never)];
    const variables = ((lambda?.Properties?.Environment as Json | undefined)?.Variables ?? {}) as Record<string, unknown>;
    const role = { Ref: own.getLogicalId(fn.role.node.defaultChild as never) };
    const granted = Object.values(resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties?.Roles) === JSON.stringify([role]))
      .flatMap((p) => (p.Properties?.PolicyDocument as { Statement: Statement[] }).Statement)
      .flatMap((s) => (Array.isArray(s.Resource) ? s.Resource : [s.Resource]))
      .map((r) => JSON.stringify(r));
    const name = functionName(fn.entry);
    if (name in out) throw new Error(`two functions are named ${name}`);
    out[name] = {
      environment: Object.keys(variables).sort(),
      granted: Object.entries(variables)
        .filter(([, value]) => typeof value === 'object' && granted.includes(JSON.stringify(value)))
        .map(([key]) => key)
        .sort(),
    };
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

/** The file's text: the `dev` stage synthesized with every option (see the header). */
export function renderEnvironments(): string {
  const cdk = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as {
    context: Record<string, unknown> & { stages: Record<string, Record<string, unknown>> };
  };
  const app = new App({ context: { ...cdk.context, 'aws:cdk:bundling-stacks': [] }, builtinCloudFormationValidation: false });
  const config = parseStageConfig({ ...cdk.context.stages.dev, ...EVERY_OPTION, stage: 'dev' });
  const stack = new AgentPaymentServiceStack(app, 'AgentPaymentService-dev', { config });
  // One line per function: a change to one function's variables is a one-line diff.
  const lines = Object.entries(deployedEnvironments(stack)).map(
    ([name, deployed]) => `  ${JSON.stringify(name)}: ${JSON.stringify(deployed)}`,
  );
  return `{\n${lines.join(',\n')}\n}\n`;
}
