/**
 * Builds the service stack for assertions: bundling skipped (the bundle test bundles for real),
 * CDK's built-in CloudFormation validator off (it costs seconds and `npm run synth` runs it), and
 * no construct's creation stack trace kept in its metadata (nothing here reads them, and each one
 * went through Jest's source maps: a fifth of a synth's CPU).
 *
 * The route functions live in nested stacks (lib/api-parts.ts). `template` is the whole service as
 * one template: the nested stacks' resources beside the parent's, every reference across a
 * nested stack boundary resolved (a nested template's parameter becomes the parent's value it is
 * given, a parent's `Fn::GetAtt` of a nested output becomes that output's value), the
 * AWS::CloudFormation::Stack plumbing left out. So a test reads a route function's policy as it
 * would in one stack (`Fn::GetAtt` of the table), and `logicalId` names any resource.
 * `templates` holds each deployed template on its own, for what CloudFormation counts per stack.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { App, NestedStack, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AgentPaymentServiceStack, type AgentPaymentServiceStackProps } from '../../lib/agent-payment-service-stack';
import { PROJECT_ROOT } from '../../lib/bundling';
import { parseStageConfig, type StageConfig } from '../../lib/stage-config';

export const TEST_STAGE_CONFIG = {
  stage: 'test',
  usdcMint: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU',
  paypalMode: 'sandbox',
  publicBaseUrl: 'https://pay.test.example.com',
  throttleRateLimit: 25,
  throttleBurstLimit: 50,
} as const;

export interface Synthesized {
  app: App;
  stack: AgentPaymentServiceStack;
  /** The parent and its nested stacks as one template (see the file header). */
  template: Template;
  /** Each template CloudFormation deploys: the parent first, then the nested stacks. */
  templates: { stack: Stack; template: Template }[];
  config: StageConfig;
}

/** cdk.json's context (feature flags and stages), as the CLI hands it to bin/app.ts. */
const cdkJson = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };
export const CDK_CONTEXT = cdkJson.context;

/** `stackProps`: the stack's own props besides the config (a route table other than ROUTES). */
export function synthesize(
  overrides: Record<string, unknown> = {},
  stackProps: Omit<AgentPaymentServiceStackProps, 'config'> = {},
): Synthesized {
  const app = new App({
    context: {
      ...CDK_CONTEXT,
      'aws:cdk:bundling-stacks': [],
      'aws:cdk:disable-creation-stack-traces': true,
      'aws:cdk:disable-stack-trace': true,
    },
    builtinCloudFormationValidation: false,
  });
  const config = parseStageConfig({ ...TEST_STAGE_CONFIG, ...overrides });
  const stack = new AgentPaymentServiceStack(app, 'AgentPaymentService-test', { ...stackProps, config });
  const nested = stack.node.findAll().filter((c): c is NestedStack => c instanceof NestedStack);
  const templates = [stack, ...nested].map((s) => ({ stack: s as Stack, template: Template.fromStack(s) }));
  return { app, stack, template: Template.fromJSON(flatten(stack, nested, templates)), templates, config };
}

type Json = Record<string, unknown>;

/** `value` with every `{Ref: name}` or `{"Fn::GetAtt": [id, attr]}` that `lookup` knows replaced by what it returns. */
function substitute(value: unknown, lookup: (node: Json) => unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => substitute(v, lookup));
  if (value === null || typeof value !== 'object') return value;
  const replaced = lookup(value as Json);
  if (replaced !== undefined) return replaced;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, lookup)]));
}

/** The parent's and the nested stacks' resources as one template, references across them resolved (see the file header). */
function flatten(parent: Stack, nested: NestedStack[], templates: { stack: Stack; template: Template }[]): Json {
  const json = (s: Stack) => templates.find((t) => t.stack === s)?.template.toJSON() as Json;
  const parentJson = json(parent);
  const parentResources = parentJson.Resources as Json;
  const merged: Json = {};
  const outputs = new Map<string, Map<string, unknown>>();
  for (const child of nested) {
    const resourceId = parent.getLogicalId(child.nestedStackResource as never);
    const given = ((parentResources[resourceId] as Json).Properties as Json | undefined)?.Parameters as Json | undefined;
    const childJson = json(child);
    const resolved = substitute(childJson, (node) =>
      typeof node.Ref === 'string' && given && node.Ref in given ? given[node.Ref] : undefined,
    ) as Json;
    for (const [id, resource] of Object.entries((resolved.Resources ?? {}) as Json)) {
      if (id in parentResources || id in merged) throw new Error(`logical id ${id} is in two templates`);
      merged[id] = resource;
    }
    outputs.set(
      resourceId,
      new Map(Object.entries((resolved.Outputs ?? {}) as Record<string, { Value: unknown }>).map(([k, o]) => [k, o.Value])),
    );
  }
  const resolvedParent = substitute(parentJson, (node) => {
    const getAtt = node['Fn::GetAtt'];
    if (!Array.isArray(getAtt)) return undefined;
    const [id, attribute] = getAtt as [string, string];
    const output = attribute.startsWith('Outputs.') ? outputs.get(id)?.get(attribute.slice('Outputs.'.length)) : undefined;
    return output;
  }) as Json;
  const own = Object.entries(resolvedParent.Resources as Json).filter(([id]) => !outputs.has(id));
  return { ...resolvedParent, Resources: { ...Object.fromEntries(own), ...merged } };
}

/** The logical id CloudFormation knows a construct's resource by. */
export function logicalId(stack: Stack, construct: { node: { defaultChild?: unknown } }): string {
  return stack.getLogicalId(construct.node.defaultChild as never);
}

type Resources = Record<string, { Type: string; Properties?: Record<string, unknown>; [key: string]: unknown }>;

export function resources(template: Template): Resources {
  return template.toJSON().Resources as Resources;
}
