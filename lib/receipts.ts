/**
 * The receipt signing key (docs/receipts.md, DESIGN §27): a KMS asymmetric key (ECC_NIST_P256,
 * SIGN_VERIFY) whose private key never leaves KMS. Only the functions that sign may use it: the
 * receipt route and the webhook dispatcher get `kms:Sign` and `kms:GetPublicKey` on it (the key's
 * id is its public key's thumbprint), the JWKS route `kms:GetPublicKey` only, on it and on the keys
 * it replaced. Nothing else is granted anything on it (test/cdk/receipts.test.ts).
 *
 * KMS does not rotate asymmetric keys: a rotation is a new key. The stage's `receiptKeyGeneration`
 * names the current one (a new construct id and alias per generation), and the keys it replaced
 * stay published by ARN (`receiptPreviousKeyArns`), retained, so every receipt they signed keeps
 * verifying (docs/operating/runbooks.md "Receipt signing key").
 */
import { Duration } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import { STATEFUL_REMOVAL } from './removal';
import type { StageConfig } from './stage-config';

export class ReceiptSigningKeys extends Construct {
  /** The key that signs now. */
  readonly key: kms.Key;
  /** The keys it replaced, still published. */
  readonly previousKeyArns: readonly string[];

  constructor(scope: Construct, id: string, props: { config: StageConfig }) {
    super(scope, id);
    const { stage, receiptKeyGeneration: generation, receiptPreviousKeyArns } = props.config;
    this.key = new kms.Key(this, generation === 1 ? 'SigningKey' : `SigningKey${generation}`, {
      description: `Signs receipts of settled money movements, ES256 (${stage}, generation ${generation})`,
      alias: `alias/agent-payment-service/${stage}/receipts-${generation}`,
      keySpec: kms.KeySpec.ECC_NIST_P256,
      keyUsage: kms.KeyUsage.SIGN_VERIFY,
      // Its public key verifies every receipt it signed: kept when the stack moves on to a new one.
      removalPolicy: STATEFUL_REMOVAL,
      pendingWindow: Duration.days(30),
    });
    this.previousKeyArns = receiptPreviousKeyArns;
  }

  /** What a function that signs or publishes is given (functions/config/fields.ts RECEIPT_*). */
  environment(use: 'sign' | 'publish'): Record<string, string> {
    return {
      RECEIPT_KMS_KEY_ID: this.key.keyArn,
      ...(use === 'publish' && this.previousKeyArns.length > 0 ? { RECEIPT_PREVIOUS_KMS_KEY_IDS: this.previousKeyArns.join(',') } : {}),
    };
  }

  /** `sign`: kms:Sign and kms:GetPublicKey on the current key. `publish`: kms:GetPublicKey on it and the keys it replaced. */
  grant(role: iam.IRole, use: 'sign' | 'publish'): void {
    const actions = use === 'sign' ? ['kms:GetPublicKey', 'kms:Sign'] : ['kms:GetPublicKey'];
    const resources = use === 'sign' ? [this.key.keyArn] : [this.key.keyArn, ...this.previousKeyArns];
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions, resources }));
  }
}
