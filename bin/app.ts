/**
 * The CDK app: one stack for the stage chosen with `-c stage=<name>` (default `dev`), configured
 * from cdk.json's `stages` block and `-c key=value` overrides (lib/stage-config.ts,
 * docs/operating/stack.md). cdk-nag's AWS Solutions checks run on every synth; a finding fails it.
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { AgentPaymentServiceStack, stackName } from '../lib/agent-payment-service-stack';
import { stageConfigFromContext } from '../lib/stage-config';

const app = new App();
const config = stageConfigFromContext(app.node);

new AgentPaymentServiceStack(app, stackName(config.stage), {
  config,
  description: `Agent Payment Service (${config.stage})`,
  env: {
    account: config.account ?? process.env.CDK_DEFAULT_ACCOUNT,
    region: config.region ?? process.env.CDK_DEFAULT_REGION,
  },
  terminationProtection: config.stage === 'production',
  // Stack tags; CloudFormation copies them onto every resource that supports tags.
  tags: { service: 'agent-payment-service', stage: config.stage },
});

Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
