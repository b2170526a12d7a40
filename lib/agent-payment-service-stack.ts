/**
 * One stack per stage: stateful data, the hot-wallet signer, the payout pipeline, the charge sweeper, the top-up watcher,
 * the webhook pipeline, the kill switch's fan-out, the HTTP API, the daily ledger audit and the alarms and dashboard, each its
 * own construct. One stack rather than a stateful/stateless pair keeps deploys atomic and avoids
 * cross-stack exports; the stateful resources are protected by RETAIN and deletion protection.
 * The HTTP route functions are in nested stacks, one per part of the API (lib/http-api.ts,
 * lib/api-parts.ts): a nested stack deploys with its parent, atomically, and has 500 resources
 * of its own.
 */
import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import type { RouteSpec } from '../functions/api/routes';
import { ChargeSweeper } from './charge-sweeper';
import { DataStore } from './data-store';
import { ServiceHttpApi } from './http-api';
import { KillSwitchFanOut } from './kill-switch-fanout';
import { LedgerAudit } from './ledger-audit';
import { Monitoring } from './monitoring';
import { PayoutPipeline } from './payout-pipeline';
import { HotWalletSigner } from './signer';
import type { StageConfig } from './stage-config';
import { TopupWatcher } from './topup-watcher';
import { WebhookPipeline } from './webhook-pipeline';

export interface AgentPaymentServiceStackProps extends StackProps {
  config: StageConfig;
  /** The HTTP routes; ROUTES (functions/api/routes.ts) by default. */
  routes?: readonly RouteSpec[];
}

export const stackName = (stage: string): string => `AgentPaymentService-${stage}`;

export class AgentPaymentServiceStack extends Stack {
  readonly data: DataStore;
  /** The hot-wallet signer: the one function that reads the hot wallet's secret (lib/signer.ts). */
  readonly signer: HotWalletSigner;
  readonly pipeline: PayoutPipeline;
  readonly sweeper: ChargeSweeper;
  readonly topupWatcher: TopupWatcher;
  readonly api: ServiceHttpApi;
  readonly monitoring: Monitoring;
  readonly webhooks: WebhookPipeline;
  readonly killSwitch: KillSwitchFanOut;
  readonly ledgerAudit: LedgerAudit;

  constructor(scope: Construct, id: string, props: AgentPaymentServiceStackProps) {
    super(scope, id, props);
    const { config } = props;

    this.data = new DataStore(this, 'Data', { config });
    this.signer = new HotWalletSigner(this, 'Signer', { config, data: this.data });
    this.pipeline = new PayoutPipeline(this, 'Payouts', { config, data: this.data, signer: this.signer });
    this.sweeper = new ChargeSweeper(this, 'Sweeper', { config, data: this.data });
    this.topupWatcher = new TopupWatcher(this, 'Topups', { config, data: this.data });
    this.webhooks = new WebhookPipeline(this, 'Webhooks', { config, data: this.data });
    this.killSwitch = new KillSwitchFanOut(this, 'KillSwitch', { config, data: this.data });
    this.api = new ServiceHttpApi(this, 'Http', {
      config,
      data: this.data,
      payoutQueue: this.pipeline.queue,
      signer: this.signer,
      routes: props.routes,
    });
    this.ledgerAudit = new LedgerAudit(this, 'LedgerAudit', { config, data: this.data });
    this.monitoring = new Monitoring(this, 'Monitoring', {
      config,
      api: this.api.api,
      ...(props.routes ? { routes: props.routes } : {}),
      // The stage's access log group (lib/http-api.ts), for the per-route 5xx and the 429 metrics.
      accessLogs: this.api.node.findChild('AccessLogs') as logs.ILogGroup,
      table: this.data.table,
      payoutQueue: this.pipeline.queue,
      deadLetterQueue: this.pipeline.deadLetterQueue,
      worker: this.pipeline.worker,
      reconciler: this.pipeline.reconcilerSchedule,
      sweeper: this.sweeper,
      topupWatcher: this.topupWatcher,
      paypalWebhook: this.api.functions.get('paypal-webhook'),
      x402Settle: this.api.functions.get('x402-settle'),
      webhooks: this.webhooks,
      ledgerAudit: this.ledgerAudit,
    });
    this.monitoring.addAlarmsToDashboard(this.webhooks.addAlarms(this.monitoring.topic));
    this.monitoring.addAlarmsToDashboard(this.killSwitch.addAlarms(this.monitoring.topic));

    new CfnOutput(this, 'ApiUrl', { value: this.api.url, description: 'Base URL of the API' });
    new CfnOutput(this, 'PublicBaseUrl', {
      value: this.api.publicBaseUrl,
      description: 'Where the approval links the API hands out point (publicBaseUrl, the custom domain or the API)',
    });
    if (this.api.customDomain) {
      // The DNS record of the custom domain: a CNAME to the target, or a Route 53 alias with the zone id.
      new CfnOutput(this, 'CustomDomainTarget', {
        value: this.api.customDomain.regionalDomainName,
        description: 'Point the custom domain here (CNAME, or a Route 53 alias with CustomDomainHostedZoneId): docs/deploy.md',
      });
      new CfnOutput(this, 'CustomDomainHostedZoneId', { value: this.api.customDomain.regionalHostedZoneId });
    }
    new CfnOutput(this, 'TableName', {
      value: this.data.table.tableName,
      description: 'DynamoDB table (agents: PK AGENTKEY#<sha256>, SK AGENT)',
    });
    new CfnOutput(this, 'PayoutQueueUrl', { value: this.pipeline.queue.queueUrl });
    new CfnOutput(this, 'PayoutDeadLetterQueueUrl', { value: this.pipeline.deadLetterQueue.queueUrl });
    new CfnOutput(this, 'PayoutDeadLetterQueueArn', { value: this.pipeline.deadLetterQueue.queueArn });
    // Under adminAuth `iam` the admin key opens nothing (no function reads it); operators attach this policy instead.
    if (this.api.adminPolicy) {
      new CfnOutput(this, 'AdminApiPolicyArn', {
        value: this.api.adminPolicy.managedPolicyArn,
        description: 'Managed policy allowing execute-api:Invoke on the admin routes: attach it to operator roles (docs/deploy.md)',
      });
    } else {
      new CfnOutput(this, 'AdminKeySecretName', { value: this.data.adminKey.secretName });
    }
    new CfnOutput(this, 'ApprovalSecretName', { value: this.data.approvalSecret.secretName });
    new CfnOutput(this, 'ReceiptSigningKeyArn', {
      value: this.data.receipts.key.keyArn,
      description: 'The KMS key that signs receipts now (docs/operating/runbooks.md "Receipt signing key")',
    });
    new CfnOutput(this, 'SolanaHotWalletSecretName', { value: this.data.solanaHotWallet.secretName });
    new CfnOutput(this, 'SolanaRpcUrlSecretName', { value: this.data.solanaRpcUrl.secretName });
    new CfnOutput(this, 'PaypalCredentialsSecretName', { value: this.data.paypalCredentials.secretName });
    new CfnOutput(this, 'PaypalWebhookIdSecretName', { value: this.data.paypalWebhookId.secretName });
    new CfnOutput(this, 'WebhookDeadLetterQueueUrl', { value: this.webhooks.deadLetterQueue.queueUrl });
    // `npm run admin -- redispatch --queue-url`, and the notes of stream batches it is run for.
    new CfnOutput(this, 'WebhookQueueUrl', { value: this.webhooks.queue.queueUrl });
    new CfnOutput(this, 'WebhookStreamFailureQueueUrl', { value: this.webhooks.streamFailureQueue.queueUrl });
    new CfnOutput(this, 'AlarmTopicArn', { value: this.monitoring.topic.topicArn });
    new CfnOutput(this, 'DashboardName', { value: this.monitoring.dashboard.dashboardName });
  }
}
