/**
 * The parts of the API, each deployed as a nested stack of its own (lib/http-api.ts): CloudFormation
 * caps a stack at 500 resources, and a route costs four in its part's stack (function, role,
 * policy, log group) and three in the parent (route, integration, invoke permission). A route's
 * part follows from its path alone, so a new route needs no new field: under `/api/v1/admin/` it
 * is the operator's; under `/api/v1/users/` the payer's; under `/api/v1/agents/`, and `/mcp` (the
 * agent tools), the agent's; anything else (the approval and consent pages, the PayPal webhook,
 * x402, health, the OpenAPI document, not-found) is public.
 */
import type { RouteSpec } from '../functions/registry/routes';

export const API_PARTS = ['agent', 'payer', 'admin', 'public'] as const;
export type ApiPart = (typeof API_PARTS)[number];

/** Path prefixes of each part but `public`, which takes the rest. */
const PREFIXES: Record<Exclude<ApiPart, 'public'>, readonly string[]> = {
  admin: ['/api/v1/admin/'],
  payer: ['/api/v1/users/'],
  agent: ['/api/v1/agents/', '/mcp'],
};

const under = (path: string, prefix: string): boolean =>
  prefix.endsWith('/') ? path.startsWith(prefix) : path === prefix || path.startsWith(`${prefix}/`);

/** Which part of the API a route belongs to (its nested stack). */
export function apiPart(route: Pick<RouteSpec, 'path'>): ApiPart {
  for (const part of ['admin', 'payer', 'agent'] as const) {
    if (PREFIXES[part].some((prefix) => under(route.path, prefix))) return part;
  }
  return 'public';
}

/** The nested stack's construct id: `agent` → `AgentRoutes`. */
export const apiPartConstructId = (part: ApiPart): string => `${part.charAt(0).toUpperCase()}${part.slice(1)}Routes`;
