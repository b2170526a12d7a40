/**
 * The house construct: every Lambda function of the service is one of these. Runtime,
 * architecture, bundling, logging, tracing and the role are decided here once; callers give the
 * entry, the sizing, the environment specific to the function, and then grant exactly what it uses.
 *
 * Tracing is off. Active X-Ray tracing without an instrumented SDK shows one segment per
 * invocation and none of the DynamoDB/SQS/Secrets Manager/RPC calls inside it: half of tracing,
 * paid for on every request. Instrumenting needs @aws-lambda-powertools/tracer, which is not a
 * dependency (docs/operating/stack.md, "Design notes": tracing); switch both on together or neither.
 *
 * Source maps are built but kept out of the zip (lib/bundling.ts: the synth leaves them in
 * `cdk.out/sourcemaps/<construct path>/`) and never loaded: NODE_OPTIONS --enable-source-maps
 * cost 6-15 % more module-load CPU (docs/operating/stack.md, "Design notes": stack traces).
 */
import * as path from 'node:path';
import { Duration } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { nodejsBundling, PROJECT_ROOT } from './bundling';
import { STATEFUL_REMOVAL } from './removal';
import type { StageConfig } from './stage-config';

export interface ServiceFunctionProps {
  /** Handler module, relative to the repository root; it exports `handler`. */
  entry: string;
  description: string;
  /** MB. API handlers are I/O-bound and small; the payout worker loads the Solana libraries. */
  memorySize?: number;
  timeout?: Duration;
  /** Variables this function needs beyond the stage-wide ones (all must be keys of functions/config.ts). */
  environment?: Record<string, string>;
  /**
   * Concurrency reserved for it (guaranteed, and its ceiling); none when undefined. Callers pass
   * the stage's choice through `reservedConcurrency(config, …)` (lib/stage-config.ts).
   */
  reservedConcurrency?: number;
  config: StageConfig;
}

export class ServiceFunction extends Construct {
  readonly fn: NodejsFunction;
  /** Handler module, relative to the repository root. */
  readonly entry: string;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    super(scope, id);
    const { config } = props;
    this.entry = props.entry;

    this.logGroup = new logs.LogGroup(this, 'Logs', {
      retention: config.logRetentionDays as logs.RetentionDays,
      // Payment logs outlive a deleted stack; they are the audit trail of what happened.
      removalPolicy: STATEFUL_REMOVAL,
    });

    // An own role instead of the managed AWSLambdaBasicExecutionRole (logs:* on every log
    // group): this function may write to its own log group and nothing else.
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `${props.description} (${config.stage})`,
    });
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [this.logGroup.logGroupArn] }),
    );

    this.fn = new NodejsFunction(this, 'Function', {
      entry: path.resolve(PROJECT_ROOT, props.entry),
      handler: 'handler',
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: path.join(PROJECT_ROOT, 'package-lock.json'),
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memorySize ?? 512,
      timeout: props.timeout ?? Duration.seconds(10),
      ...(props.reservedConcurrency !== undefined ? { reservedConcurrentExecutions: props.reservedConcurrency } : {}),
      description: props.description,
      role: this.role,
      logGroup: this.logGroup,
      loggingFormat: lambda.LoggingFormat.JSON,
      // Lambda filters below this level too; keep it equal to LOG_LEVEL so the two never disagree.
      applicationLogLevelV2: lambda.ApplicationLogLevel[config.logLevel],
      systemLogLevelV2: lambda.SystemLogLevel.INFO,
      tracing: lambda.Tracing.DISABLED, // see the file header
      awsSdkConnectionReuse: false, // SDK v3 keeps connections alive by itself (functions/store/client.ts)
      bundling: nodejsBundling(this.node.path),
      environment: {
        STAGE: config.stage,
        LOG_LEVEL: config.logLevel,
        ...props.environment,
      },
    });
  }
}
