/**
 * Approval (and, later, consent) links carry a capability in their path: it must never reach an
 * access log, and the links must point at the stage's configured public address, never at a
 * request's Host header (docs/approvals.md "The link's address").
 */
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { ROUTES } from '../../functions/api/routes';
import { OPERATIONS } from '../../functions/operations/all';
import { PROJECT_ROOT } from '../../lib/bundling';
import { logicalId, resources, synthesize } from './support';

const synthesized = synthesize();
const { stack, template, config } = synthesized;

describe('access logs', () => {
  it('log the route key, never the path, query string or a header', () => {
    const stages = Object.values(resources(template)).filter((r) => r.Type === 'AWS::ApiGatewayV2::Stage');
    expect(stages).toHaveLength(1);
    const format = (stages[0]?.Properties?.AccessLogSettings as { Format: string }).Format;
    const fields = JSON.parse(format) as Record<string, string>;
    expect(fields.routeKey).toBe('$context.routeKey');
    for (const [name, value] of Object.entries(fields)) {
      expect([name, value]).not.toEqual([
        name,
        expect.stringMatching(/\$context\.(path|http\.path|rawPath)|querystring|\$request\.|header/i),
      ]);
    }
    expect(format).not.toContain('$context.path');
  });
});

describe('links', () => {
  /** Route handlers that build a link (they call publicBaseUrl()). */
  const linkMakers = readdirSync(path.join(PROJECT_ROOT, 'functions', 'api'))
    .filter((file) => file.endsWith('.handler.ts'))
    .filter((file) => {
      const text = readFileSync(path.join(PROJECT_ROOT, 'functions', 'api', file), 'utf8');
      // The console's routes (and the consent page, which reads its session) run functions/console/,
      // whose relying party, cookie name and Origin check read it.
      // A derived handler (`lambdaHandler(op)`) makes links when its operation says `links: true`.
      const derived = /lambdaHandler\((\w+)\)/.exec(text)?.[1];
      const linking = derived !== undefined && OPERATIONS.get(derived)?.links === true;
      return linking || text.includes('publicBaseUrl(') || text.includes("from '../console/");
    })
    .map((file) => file.replace(/\.handler\.ts$/, ''));

  it('every function that makes links gets the stage’s PUBLIC_BASE_URL, and no other does', () => {
    expect(linkMakers.sort()).toEqual([
      // The operator's answers show a settled charge or a COMPLETED payout as its parties see it, receipt link and all (DESIGN §27).
      'admin-get-charge',
      'admin-list-agent-charges',
      'admin-list-payouts',
      'admin-refund-charge',
      'agent-create-grant-request',
      'agent-get-grant-request',
      // A tab above the payer's approval threshold waits like a hold, with its approval link (docs/tabs.md).
      'agent-open-tab',
      'agent-x402-purchase-create',
      // A captured purchase carries its receipt link (DESIGN §27).
      'agent-x402-purchase-get',
      'agent-x402-purchase-receipt',
      'agent-x402-purchases-list',
      // A COMPLETED x402 refund's receipt link (DESIGN §27).
      'agent-x402-refund-get',
      'agent-x402-settings',
      // A captured or refunded charge carries its receipt links (receiptUrl, refundReceiptUrl: DESIGN §27).
      'capture-charge',
      // The consent page reads the console's session (DESIGN §21); the console: passkeys' relying
      // party and the one Origin a form may come from (docs/console.md).
      'consent-decide',
      'consent-page',
      'console',
      'console-pages',
      'console-passkey-sign-in',
      'console-sign-in',
      'console-sign-up',
      'create-charge',
      'get-charge',
      'list-charges',
      // A COMPLETED payout carries its receipt link (DESIGN §27).
      'list-withdrawals',
      'mcp',
      'refund-charge',
      // An approved charge is SUCCESS: its receipt link (DESIGN §27).
      'user-approve-charge',
      // The payer's PENDING history carries each user_approval charge's approval link (DESIGN §16), a settled one its receipt link.
      'user-list-charges',
    ]);
    for (const name of linkMakers) {
      const route = ROUTES.find((r) => r.name === name);
      expect([name, route?.publicLinks]).toEqual([name, true]);
      const fn = stack.api.functions.get(name);
      const env = (
        resources(template)[fn ? logicalId(stack, fn.fn) : '']?.Properties?.Environment as { Variables: Record<string, unknown> }
      ).Variables;
      expect([name, env.PUBLIC_BASE_URL]).toEqual([name, config.publicBaseUrl]);
    }
    for (const route of ROUTES.filter((r) => r.publicLinks)) expect(linkMakers).toContain(route.name);
  });
});

describe('the links\' address on a first deploy (docs/operating/first-deploy.md "The public address")', () => {
  const DOMAIN = 'pay.example.com';
  const CERTIFICATE = 'arn:aws:acm:eu-west-1:123456789012:certificate/0a1b2c3d-4e5f-6789-abcd-ef0123456789';
  const linkEnv = (synthesized: ReturnType<typeof synthesize>) => {
    const fn = synthesized.stack.api.functions.get('create-charge');
    return (
      resources(synthesized.template)[fn ? logicalId(synthesized.stack, fn.fn) : '']?.Properties?.Environment as {
        Variables: Record<string, unknown>;
      }
    ).Variables.PUBLIC_BASE_URL;
  };
  const ofType = (synthesized: ReturnType<typeof synthesize>, type: string) =>
    Object.entries(resources(synthesized.template)).filter(([, r]) => r.Type === type);
  const outputs = (synthesized: ReturnType<typeof synthesize>) =>
    (synthesized.templates[0]?.template.toJSON().Outputs ?? {}) as Record<string, { Value: unknown }>;
  const apiId = (synthesized: ReturnType<typeof synthesize>) => logicalId(synthesized.stack, synthesized.stack.api.api);

  it('points at the API itself when the stage names no address: links that work from the first deploy', () => {
    const bare = synthesize({ publicBaseUrl: undefined });
    expect(linkEnv(bare)).toEqual({ 'Fn::GetAtt': [apiId(bare), 'ApiEndpoint'] });
    expect(ofType(bare, 'AWS::ApiGatewayV2::DomainName')).toEqual([]);
    expect(outputs(bare).PublicBaseUrl?.Value).toEqual({ 'Fn::GetAtt': [apiId(bare), 'ApiEndpoint'] });
  });

  it('serves the API on the stage’s custom domain (its ACM certificate, TLS 1.2) and points the links there', () => {
    const custom = synthesize({ publicBaseUrl: undefined, domainName: DOMAIN, certificateArn: CERTIFICATE });
    const domains = ofType(custom, 'AWS::ApiGatewayV2::DomainName');
    expect(domains).toHaveLength(1);
    const [domainId, domain] = domains[0] ?? [];
    expect(domain?.Properties).toEqual({
      DomainName: DOMAIN,
      DomainNameConfigurations: [{ CertificateArn: CERTIFICATE, EndpointType: 'REGIONAL', SecurityPolicy: 'TLS_1_2' }],
    });
    const mappings = ofType(custom, 'AWS::ApiGatewayV2::ApiMapping');
    expect(mappings.map(([, r]) => r.Properties)).toEqual([
      { ApiId: { Ref: apiId(custom) }, DomainName: { Ref: domainId }, Stage: '$default' },
    ]);
    // Named, not referenced: the mapping waits for the stage explicitly.
    expect(mappings[0]?.[1].DependsOn).toContain(logicalId(custom.stack, custom.stack.api.stage));
    expect(linkEnv(custom)).toBe(`https://${DOMAIN}`);
    expect(outputs(custom).PublicBaseUrl?.Value).toBe(`https://${DOMAIN}`);
    // Where the DNS record points (a CNAME, or an alias with the zone id).
    expect(outputs(custom).CustomDomainTarget?.Value).toEqual({ 'Fn::GetAtt': [domainId, 'RegionalDomainName'] });
    expect(outputs(custom).CustomDomainHostedZoneId?.Value).toEqual({ 'Fn::GetAtt': [domainId, 'RegionalHostedZoneId'] });
  });

  it('keeps an explicit publicBaseUrl over both (a base path, a CDN in front)', () => {
    const both = synthesize({ publicBaseUrl: 'https://example.com/pay', domainName: DOMAIN, certificateArn: CERTIFICATE });
    expect(linkEnv(both)).toBe('https://example.com/pay');
    expect(ofType(both, 'AWS::ApiGatewayV2::DomainName')).toHaveLength(1);
    expect(linkEnv(synthesized)).toBe(config.publicBaseUrl);
    expect(ofType(synthesized, 'AWS::ApiGatewayV2::DomainName')).toEqual([]);
  });

  it('refuses a domain without its certificate (or the reverse), a URL for a domain, and a certificate of another region', () => {
    expect(() => synthesize({ domainName: DOMAIN })).toThrow(/domainName: needs certificateArn/);
    expect(() => synthesize({ certificateArn: CERTIFICATE })).toThrow(/certificateArn: needs domainName/);
    expect(() => synthesize({ domainName: `https://${DOMAIN}`, certificateArn: CERTIFICATE })).toThrow(/domainName: a host name/);
    expect(() => synthesize({ domainName: DOMAIN, certificateArn: 'arn:aws:iam::123456789012:role/x' })).toThrow(
      /certificateArn: an ACM certificate ARN/,
    );
    // A regional API serves only a certificate of its own region.
    expect(() => synthesize({ domainName: DOMAIN, certificateArn: CERTIFICATE, region: 'us-east-1' })).toThrow(
      /certificateArn: .*eu-west-1.*us-east-1/,
    );
    // The same when the region comes from the deploying credentials (bin/app.ts: CDK_DEFAULT_REGION).
    expect(() =>
      synthesize({ domainName: DOMAIN, certificateArn: CERTIFICATE }, { env: { account: '123456789012', region: 'us-east-1' } }),
    ).toThrow(/certificateArn: .*eu-west-1.*us-east-1/);
  });
});

describe('the console at each address (issue 38, docs/deploy.md "Addresses")', () => {
  const DOMAIN = 'pay.example.com';
  const CERTIFICATE = 'arn:aws:acm:eu-west-1:123456789012:certificate/0a1b2c3d-4e5f-6789-abcd-ef0123456789';
  const consoleEnv = (synthesized: ReturnType<typeof synthesize>, name = 'console-pages') => {
    const fn = synthesized.stack.api.functions.get(name);
    return (
      resources(synthesized.template)[fn ? logicalId(synthesized.stack, fn.fn) : '']?.Properties?.Environment as {
        Variables: Record<string, unknown>;
      }
    ).Variables;
  };

  it('sends a GET on the execute-api host to the public address only when that is the stack’s own custom domain', () => {
    // A custom domain: requests for it arrive with its name as Host, so another Host is the execute-api one.
    const custom = synthesize({ publicBaseUrl: undefined, domainName: DOMAIN, certificateArn: CERTIFICATE });
    expect(consoleEnv(custom).CONSOLE_HOST_REDIRECT).toBe('1');
    expect(consoleEnv(custom, 'console').CONSOLE_HOST_REDIRECT).toBe('1');
    // CI's production synth (-c publicBaseUrl=…, a CDN in front): its requests arrive with the origin's Host; a
    // redirect would loop. With a custom domain as the CDN's origin too.
    expect(consoleEnv(synthesized).CONSOLE_HOST_REDIRECT).toBeUndefined();
    const cdnOnDomain = synthesize({ publicBaseUrl: 'https://example.com/pay', domainName: DOMAIN, certificateArn: CERTIFICATE });
    expect(consoleEnv(cdnOnDomain).CONSOLE_HOST_REDIRECT).toBeUndefined();
    // The API's own address: nothing else reaches it.
    expect(consoleEnv(synthesize({ publicBaseUrl: undefined })).CONSOLE_HOST_REDIRECT).toBeUndefined();
    // Only the console's functions have it.
    expect(consoleEnv(custom, 'create-charge').CONSOLE_HOST_REDIRECT).toBeUndefined();
  });

  it('gives the console a relying party id the public host is under, and refuses any other', () => {
    const kept = synthesize({ publicBaseUrl: undefined, domainName: DOMAIN, certificateArn: CERTIFICATE, rpId: 'example.com' });
    expect(consoleEnv(kept).CONSOLE_RP_ID).toBe('example.com');
    expect(consoleEnv(synthesized).CONSOLE_RP_ID).toBeUndefined();
    expect(() => synthesize({ rpId: 'other.example.org' })).toThrow(/rpId: must be the public address’s host or a domain it is under/);
    expect(() => synthesize({ publicBaseUrl: undefined, rpId: 'example.com' })).toThrow(/rpId: needs publicBaseUrl or domainName/);
  });
});
