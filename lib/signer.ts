/**
 * The hot-wallet signer (DESIGN §24): one small function that holds the hot wallet's secret and
 * signs what the money paths ask it to, after its own checks (functions/signer/). Its role is the
 * only one that may read the secret (an IAM grant, and the secret's resource policy denies every
 * other principal: DataStore.restrictHotWalletReaders); the money paths may invoke it
 * (`grantInvoke`: the payout worker, the reconciler, x402 settle, the purchase routes, the MCP
 * server) and nothing else may. It has no trigger: no API route, no event source, no schedule.
 */
import { Duration } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import type { DataStore } from './data-store';
import { grantReadSecrets } from './grants';
import { ServiceFunction } from './service-function';
import type { StageConfig } from './stage-config';
import { x402Environment } from './x402';

export const SIGNER_ENTRY = 'functions/signer/handler.ts';

export class HotWalletSigner extends Construct {
  readonly fn: ServiceFunction;

  constructor(scope: Construct, id: string, props: { config: StageConfig; data: DataStore }) {
    super(scope, id);
    const { config, data } = props;
    this.fn = new ServiceFunction(this, 'Function', {
      entry: SIGNER_ENTRY,
      description: "Hot-wallet signer: the only reader of the hot wallet's key; signs checked payouts, x402 settlements and purchases",
      // ed25519 and the x402 scheme's verify (a simulation) on a cold start: more memory is more CPU.
      memorySize: 1024,
      timeout: Duration.seconds(15),
      config,
      environment: {
        // Every function names the table (config.ts requires it); the signer never touches it.
        TABLE_NAME: data.table.tableName,
        // The chain's settings (the mint, the RPC URL's secret, the network, the fee payer's and the treasury's addresses).
        ...x402Environment(config, data),
        SOLANA_HOT_WALLET_SECRET_ARN: data.solanaHotWallet.secretArn,
      },
    });
    grantReadSecrets(this.fn.role, [data.solanaHotWallet, data.solanaRpcUrl]);
    data.restrictHotWalletReaders([this.fn.role]);
  }

  /** What a money path's function is told: the signer's name (functions/rails/hot-wallet-signer.ts). */
  get environment(): { SIGNER_FUNCTION_NAME: string } {
    return { SIGNER_FUNCTION_NAME: this.fn.fn.functionName };
  }

  /** lambda:InvokeFunction on the signer alone (not its versions or aliases: it has none). */
  grantInvoke(role: iam.IRole): void {
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [this.fn.fn.functionArn] }));
  }
}
