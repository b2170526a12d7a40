/**
 * The receipt signing key in the stack (lib/receipts.ts, docs/receipts.md): a KMS asymmetric
 * ECC_NIST_P256 SIGN_VERIFY key, retained; `kms:Sign` granted to the functions that sign receipts (the
 * receipt route, the webhook dispatcher) and to nothing else; the key set's function reads public keys only, the rotated keys' too; a rotation
 * is a new key under a new alias, the old one published by ARN.
 */
import { logicalId, resources, synthesize } from './support';

type Statement = { Action: string | string[]; Resource: unknown; Effect: string };
const asArray = <T>(v: T | T[]): T[] => (Array.isArray(v) ? v : [v]);

function kmsGrants(all: ReturnType<typeof resources>) {
  return Object.values(all)
    .filter((r) => r.Type === 'AWS::IAM::Policy')
    .flatMap((p) =>
      (p.Properties?.PolicyDocument as { Statement: Statement[] }).Statement.map((s) => ({
        roles: JSON.stringify(p.Properties?.Roles),
        s,
      })),
    )
    .filter(({ s }) => asArray(s.Action).some((a) => a === 'kms:Sign' || a === 'kms:GetPublicKey' || a === 'kms:*'));
}

describe('the receipt signing key', () => {
  const { stack, template } = synthesize();
  const all = resources(template);
  const keyId = logicalId(stack, stack.data.receipts.key);
  const keyArn = JSON.stringify({ 'Fn::GetAtt': [keyId, 'Arn'] });
  const roleOf = (fn: { role: unknown }) => JSON.stringify([{ Ref: logicalId(stack, fn.role as never) }]);

  it('is an ECC_NIST_P256 SIGN_VERIFY key, retained, under the stage’s receipts alias', () => {
    expect(all[keyId]).toMatchObject({
      Type: 'AWS::KMS::Key',
      Properties: { KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY' },
      DeletionPolicy: 'RetainExceptOnCreate',
      UpdateReplacePolicy: 'Retain',
    });
    expect(
      Object.values(all).filter(
        (r) => r.Type === 'AWS::KMS::Alias' && r.Properties?.AliasName === 'alias/agent-payment-service/test/receipts-1',
      ),
    ).toHaveLength(1);
  });

  it('grants kms:Sign on it to the receipt route, the webhook dispatcher and the console only, and kms:GetPublicKey to them and the key set only', () => {
    const grants = kmsGrants(all);
    const signers = grants.filter(({ s }) => asArray(s.Action).includes('kms:Sign'));
    expect(signers.map(({ roles }) => roles).sort()).toEqual(
      [
        roleOf(stack.api.functions.get('get-receipt') as never),
        roleOf(stack.webhooks.dispatcher),
        // The console's Statement links each row's receipt, signed for the signed-in payer (pages/receipts.ts).
        roleOf(stack.api.functions.get('console') as never),
        roleOf(stack.api.functions.get('console-pages') as never),
      ].sort(),
    );
    for (const { s } of grants) {
      expect(JSON.stringify(asArray(s.Resource as unknown[]))).toBe(`[${keyArn}]`);
      expect(asArray(s.Action).sort()).not.toContain('kms:*');
    }
    expect(grants.map(({ roles }) => roles).sort()).toEqual(
      [
        stack.api.functions.get('get-receipt'),
        stack.api.functions.get('jwks'),
        stack.webhooks.dispatcher,
        stack.api.functions.get('console'),
        stack.api.functions.get('console-pages'),
      ]
        .map((fn) => roleOf(fn as never))
        .sort(),
    );
    // The key policy gives the account's root the key (CDK's default, as every key of the stack): no principal by name.
    expect(JSON.stringify(all[keyId]?.Properties?.KeyPolicy)).not.toContain('kms:Sign');
  });

  it('gives the key to the functions that use it, and to no other', () => {
    const given = Object.entries(all)
      .filter(([, r]) => r.Type === 'AWS::Lambda::Function')
      .filter(([, r]) => JSON.stringify(r.Properties?.Environment ?? {}).includes('RECEIPT_KMS_KEY_ID'))
      .map(([, r]) => JSON.stringify((r.Properties?.Environment as { Variables: Record<string, unknown> }).Variables.RECEIPT_KMS_KEY_ID));
    expect(given).toEqual([keyArn, keyArn, keyArn, keyArn, keyArn]);
  });

  it('rotates to a new key under a new alias, publishing the old one by ARN with kms:GetPublicKey only', () => {
    const old = 'arn:aws:kms:us-east-1:111122223333:key/11111111-2222-3333-4444-555555555555';
    const rotated = synthesize({ receiptKeyGeneration: 2, receiptPreviousKeyArns: old });
    const rotatedAll = resources(rotated.template);
    expect(logicalId(rotated.stack, rotated.stack.data.receipts.key)).not.toBe(keyId);
    expect(
      Object.values(rotatedAll).filter(
        (r) => r.Type === 'AWS::KMS::Alias' && r.Properties?.AliasName === 'alias/agent-payment-service/test/receipts-2',
      ),
    ).toHaveLength(1);
    const onOld = kmsGrants(rotatedAll).filter(({ s }) => JSON.stringify(s.Resource).includes(old));
    expect(onOld).toHaveLength(1);
    expect(asArray(onOld[0]?.s.Action)).toEqual(['kms:GetPublicKey']);
    expect(onOld[0]?.roles).toBe(roleOf(rotated.stack.api.functions.get('jwks') as never));
  });
});
