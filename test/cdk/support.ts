/**
 * Builds the service stack for assertions: bundling skipped (the bundle test bundles for real),
 * CDK's built-in CloudFormation validator off (it costs seconds and `npm run synth` runs it).
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { App, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AgentPaymentServiceStack } from '../../lib/agent-payment-service-stack';
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
  template: Template;
  config: StageConfig;
}

/** cdk.json's context (feature flags and stages), as the CLI hands it to bin/app.ts. */
const cdkJson = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };
export const CDK_CONTEXT = cdkJson.context;

export function synthesize(overrides: Record<string, unknown> = {}): Synthesized {
  const app = new App({ context: { ...CDK_CONTEXT, 'aws:cdk:bundling-stacks': [] }, builtinCloudFormationValidation: false });
  const config = parseStageConfig({ ...TEST_STAGE_CONFIG, ...overrides });
  const stack = new AgentPaymentServiceStack(app, 'AgentPaymentService-test', { config });
  return { app, stack, template: Template.fromStack(stack), config };
}

/** The logical id CloudFormation knows a construct's resource by. */
export function logicalId(stack: Stack, construct: { node: { defaultChild?: unknown } }): string {
  return stack.getLogicalId(construct.node.defaultChild as never);
}

type Resources = Record<string, { Type: string; Properties?: Record<string, unknown>; [key: string]: unknown }>;

export function resources(template: Template): Resources {
  return template.toJSON().Resources as Resources;
}
