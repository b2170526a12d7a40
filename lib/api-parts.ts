/**
 * The parts of the API, each deployed as a nested stack of its own (lib/http-api.ts): CloudFormation
 * caps a stack at 500 resources, and a route costs six in its part's stack (function, role,
 * policy, log group, its integration and invoke permission: `PartLambdaIntegration`) and one in the
 * parent (the route itself: docs/operating/stack.md "Nested stacks" says why it stays). A route's
 * part follows from its path alone, so a new route needs no new field: under `/api/v1/admin/` it
 * is the operator's; under `/api/v1/users/` the payer's; under `/api/v1/agents/`, and `/mcp` (the
 * agent tools), the agent's; anything else (the approval and consent pages, the PayPal webhook,
 * x402, health, the OpenAPI document, not-found) is public.
 */
import { Stack } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
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

/**
 * A Lambda proxy integration (payload 2.0, as HttpLambdaIntegration makes it) whose integration and
 * invoke permission live in `scope`, the route function's nested stack, while the route that names
 * it stays where it is (the parent): per route the parent holds one resource, not three. The
 * permission is HttpLambdaIntegration's (API Gateway, this route's path, any stage and method);
 * the integration waits for it, so API Gateway never calls a function it may not invoke yet.
 */
export class PartLambdaIntegration extends apigw.HttpRouteIntegration {
  constructor(
    private readonly integrationId: string,
    private readonly handler: lambda.IFunction,
    private readonly scope: Construct,
  ) {
    super(integrationId);
  }

  bind(): apigw.HttpRouteIntegrationConfig {
    return {
      type: apigw.HttpIntegrationType.AWS_PROXY,
      uri: this.handler.functionArn,
      payloadFormatVersion: apigw.PayloadFormatVersion.VERSION_2_0,
    };
  }

  /** @internal The integration (made by the base class in the bind's scope) in the part's stack instead of the route's. */
  override _bindToRoute(options: apigw.HttpRouteIntegrationBindOptions): { readonly integrationId: string } {
    return super._bindToRoute({ ...options, scope: this.scope });
  }

  protected override completeBind(options: apigw.HttpRouteIntegrationBindOptions): void {
    const { route } = options;
    const permissionId = `${this.integrationId}-Permission`;
    this.handler.addPermission(permissionId, {
      scope: options.scope,
      principal: new iam.ServicePrincipal('apigateway.amazonaws.com'),
      sourceArn: Stack.of(route).formatArn({
        service: 'execute-api',
        resource: route.httpApi.apiId,
        resourceName: `*/*${route.path ?? ''}`,
      }),
    });
    options.scope.node.findChild(this.integrationId).node.addDependency(options.scope.node.findChild(permissionId));
  }
}
