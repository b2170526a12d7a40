/** Stage configuration from cdk.json and `-c key=value`, and what it changes in the stack. */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { App } from 'aws-cdk-lib';
import { PROJECT_ROOT } from '../../lib/bundling';
import { stageConfigFromContext } from '../../lib/stage-config';
import { logicalId, resources, synthesize } from './support';

const cdkJson = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as {
  app: string;
  notices: boolean;
  'cli-telemetry': boolean;
  context: Record<string, unknown>;
};
const fromContext = (extra: Record<string, unknown>) => stageConfigFromContext(new App({ context: { ...cdkJson.context, ...extra } }).node);

/** A stage block with one extra key, straight from cdk.json (a `-c` override of an unknown key is ignored). */
const parseStageConfigFor = (extra: Record<string, unknown>) =>
  stageConfigFromContext(new App({ context: { stages: { dev: { ...(cdkJson.context.stages as { dev: object }).dev, ...extra } } } }).node);

const USDC_MAINNET = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
/** What a production synth must be given (cdk.json holds neither): the deploy passes them with -c. */
const PRODUCTION_NEEDS = { alarmEmail: 'ops@example.com', publicBaseUrl: 'https://pay.example.com' };

describe('stage configuration', () => {
  it('runs the app with tsx and keeps the CLI offline (no notices, no telemetry)', () => {
    expect(cdkJson).toMatchObject({ app: 'npx tsx bin/app.ts', notices: false, 'cli-telemetry': false });
  });

  it('defaults to the dev stage, and every stage in cdk.json is valid', () => {
    expect(fromContext({}).stage).toBe('dev');
    for (const stage of ['dev', 'staging']) expect(fromContext({ stage }).stage).toBe(stage);
    expect(fromContext({ stage: 'production', ...PRODUCTION_NEEDS }).stage).toBe('production');
  });

  it('refuses a production synth without alarmEmail, saying where to set it', () => {
    expect(() => fromContext({ stage: 'production', publicBaseUrl: PRODUCTION_NEEDS.publicBaseUrl })).toThrow(
      /alarmEmail: required for production.*ALARM_EMAIL/,
    );
    // What CI passes when the GitHub variable is unset: an empty string is no value.
    expect(() => fromContext({ stage: 'production', publicBaseUrl: PRODUCTION_NEEDS.publicBaseUrl, alarmEmail: '' })).toThrow(
      /alarmEmail: required for production/,
    );
    expect(fromContext({ stage: 'staging' }).alarmEmail).toBeUndefined();
  });

  it('takes publicBaseUrl as an https URL (no credentials, query or fragment), and needs none: the links then point at the custom domain or the API', () => {
    // No placeholder in cdk.json: a placeholder made dead links until someone replaced it.
    for (const stage of ['dev', 'staging']) expect(fromContext({ stage }).publicBaseUrl).toBeUndefined();
    expect(fromContext({ stage: 'staging', publicBaseUrl: 'https://pay.example.org/api/' }).publicBaseUrl).toBe(
      'https://pay.example.org/api',
    );
    // A production deploy before its domain exists (lib/http-api.ts derives the address).
    expect(fromContext({ stage: 'production', alarmEmail: 'ops@example.com' }).publicBaseUrl).toBeUndefined();
    // What CI passes when the GitHub variable is unset: an empty string is no value.
    expect(fromContext({ stage: 'production', alarmEmail: 'ops@example.com', publicBaseUrl: '' }).publicBaseUrl).toBeUndefined();
    // The custom domain, as the deploy passes it (-c domainName=… -c certificateArn=…).
    const certificateArn = 'arn:aws:acm:eu-west-1:123456789012:certificate/0a1b2c3d-4e5f-6789-abcd-ef0123456789';
    expect(
      fromContext({ stage: 'production', alarmEmail: 'ops@example.com', domainName: 'pay.example.com', certificateArn }),
    ).toMatchObject({
      domainName: 'pay.example.com',
      certificateArn,
    });
    for (const bad of [
      'http://pay.example.com',
      'pay.example.com',
      'https://u:p@pay.example.com',
      'https://pay.example.com/?a=1',
      'https://pay.example.com/#x',
    ]) {
      expect(() => parseStageConfigFor({ publicBaseUrl: bad })).toThrow(/publicBaseUrl: an https:\/\/ URL/);
    }
  });

  it('takes the hot-wallet break-glass role as an IAM role ARN only', () => {
    const arn = 'arn:aws:iam::123456789012:role/break-glass';
    expect(fromContext({ stage: 'staging', hotWalletBreakGlassRoleArn: arn }).hotWalletBreakGlassRoleArn).toBe(arn);
    expect(() => fromContext({ stage: 'staging', hotWalletBreakGlassRoleArn: 'arn:aws:iam::123456789012:user/alice' })).toThrow(
      /hotWalletBreakGlassRoleArn/,
    );
  });

  it('keeps the Solana RPC URL out of the stage configuration: it is a secret (a provider URL carries its key)', () => {
    const stages = cdkJson.context.stages as Record<string, Record<string, unknown>>;
    for (const block of Object.values(stages)) expect(block).not.toHaveProperty('solanaRpcUrl');
    expect(() => parseStageConfigFor({ solanaRpcUrl: 'https://rpc.example.com/key' })).toThrow(/solanaRpcUrl/);
  });

  it('pays real money only in production: live PayPal and mainnet USDC there, sandbox and devnet elsewhere', () => {
    expect(fromContext({ stage: 'production', ...PRODUCTION_NEEDS })).toMatchObject({
      paypalMode: 'live',
      usdcMint: USDC_MAINNET,
    });
    for (const stage of ['dev', 'staging']) {
      const config = fromContext({ stage });
      expect(config.paypalMode).toBe('sandbox');
      expect(config.usdcMint).not.toBe(USDC_MAINNET);
    }
  });

  it('lets -c key=value override the stage block, coercing numbers (the CLI passes strings)', () => {
    const config = fromContext({
      stage: 'staging',
      throttleRateLimit: '75',
      alarmEmail: 'ops@example.com',
    });
    expect(config).toMatchObject({ throttleRateLimit: 75, alarmEmail: 'ops@example.com' });
    expect(config.payoutMaxReceives).toBe(5);
  });

  it('refuses an unknown stage, an unknown key and a malformed value, saying which', () => {
    expect(() => fromContext({ stage: 'qa' })).toThrow(/no configuration for stage "qa"/);
    expect(() =>
      stageConfigFromContext(
        new App({ context: { stages: { dev: { ...(cdkJson.context.stages as { dev: object }).dev, colour: 'blue' } } } }).node,
      ),
    ).toThrow(/colour/);
    expect(() => fromContext({ stage: 'production', ...PRODUCTION_NEEDS, paypalMode: 'test' })).toThrow(/paypalMode/);
    expect(() => fromContext({ logRetentionDays: '10' })).toThrow(/logRetentionDays/);
  });

  it('sends live-mode rails and alarm e-mail where configured', () => {
    const { stack, template } = synthesize({ paypalMode: 'live', alarmEmail: 'ops@example.com' });
    const worker = resources(template)[logicalId(stack, stack.pipeline.worker.fn)];
    expect((worker?.Properties?.Environment as { Variables: Record<string, unknown> }).Variables.PAYPAL_BASE_URL).toBe(
      'https://api-m.paypal.com',
    );
    template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com' });
  });
});
