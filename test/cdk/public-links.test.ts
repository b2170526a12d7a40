/**
 * Approval (and, later, consent) links carry a capability in their path: it must never reach an
 * access log, and the links must point at the stage's configured public address, never at a
 * request's Host header (docs/approvals.md "The link's address").
 */
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { ROUTES } from '../../functions/api/routes';
import { PROJECT_ROOT } from '../../lib/bundling';
import { logicalId, resources, synthesize } from './support';

const { stack, template, config } = synthesize();

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
    .filter((file) => readFileSync(path.join(PROJECT_ROOT, 'functions', 'api', file), 'utf8').includes('publicBaseUrl('))
    .map((file) => file.replace(/\.handler\.ts$/, ''));

  it('every function that makes links gets the stage’s PUBLIC_BASE_URL, and no other does', () => {
    expect(linkMakers.sort()).toEqual([
      'agent-create-grant-request',
      'agent-get-grant-request',
      'agent-x402-settings',
      'create-charge',
      'mcp',
      // The payer's PENDING history carries each user_approval charge's approval link (DESIGN §16).
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
