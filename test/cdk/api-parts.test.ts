/** Which nested stack a route's function goes to (lib/api-parts.ts): by its path alone. */
import { ROUTES } from '../../functions/api/routes';
import { API_PARTS, apiPart, apiPartConstructId } from '../../lib/api-parts';

describe('parts of the API', () => {
  it('puts every route in the part its path says', () => {
    const byPart = Object.fromEntries(API_PARTS.map((part) => [part, ROUTES.filter((r) => apiPart(r) === part).map((r) => r.path)]));
    expect(byPart.admin?.every((p) => p.startsWith('/api/v1/admin/'))).toBe(true);
    expect(byPart.payer?.every((p) => p.startsWith('/api/v1/users/'))).toBe(true);
    expect(byPart.agent?.every((p) => p.startsWith('/api/v1/agents/') || p === '/mcp')).toBe(true);
    expect([...new Set(byPart.public)].sort()).toEqual(
      [
        '$default',
        '/',
        '/.well-known/jwks.json',
        '/api/v1/openapi.json',
        '/api/v1/paypal/webhooks',
        '/api/v1/receipts/{id}',
        '/approve/{token}',
        '/consent/{token}',
        '/console',
        '/console/login',
        '/console/login/{proxy+}',
        '/console/signup/{proxy+}',
        '/console/{proxy+}',
        '/health',
        '/x402/settle',
        '/x402/supported',
        '/x402/verify',
      ].sort(),
    );
    for (const part of API_PARTS) expect([part, (byPart[part]?.length ?? 0) > 0]).toEqual([part, true]);
  });

  it.each([
    ['/api/v1/users/me/grants/{id}', 'payer'],
    ['/api/v1/admin/users/{id}/keys/rotate', 'admin'],
    ['/api/v1/agents/grant-requests', 'agent'],
    ['/api/v1/agents/x402/payments', 'agent'],
    ['/consent/{token}', 'public'],
    ['/x402/settle', 'public'],
    ['/mcp', 'agent'],
    ['/mcp/extra', 'agent'],
    ['/mcpx', 'public'],
    ['/api/v1/usersx', 'public'],
  ])('places the planned or odd path %s in %s', (path, part) => {
    expect(apiPart({ path })).toBe(part);
  });

  it('names the nested stacks after their parts', () => {
    expect(API_PARTS.map(apiPartConstructId)).toEqual(['AgentRoutes', 'PayerRoutes', 'AdminRoutes', 'PublicRoutes']);
  });
});
