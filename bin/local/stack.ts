/**
 * The whole service on one machine: DynamoDB Local, the table, and every route's real handler
 * behind the node:http adapter. `npm start` and the end-to-end tests both start it through here.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { handlerEntry, ROUTES } from '../../functions/api/routes';
import { resetConfig } from '../../functions/config';
import type { RouteHandler } from '../../functions/http/handler';
import { resetDbClient } from '../../functions/store/client';
import { resetAdminKey } from '../../functions/use-cases/admin-key';
import { clearAuthCache } from '../../functions/use-cases/auth';
import { type DynamoDbLocal, PROJECT_ROOT, startDynamoDbLocal } from './dynamodb-local';
import { createRequestListener, type LoadedRoute } from './http-adapter';
import { ensureTable } from './table';

export interface LocalStackOptions {
  port?: number;
  host?: string;
  /** Throwaway database (IN_MEMORY=1). */
  inMemory?: boolean;
  dataDir?: string;
  adminKey?: string;
  tableName?: string;
  /** Reuse a running DynamoDB Local instead of starting one (tests share one). */
  dynamoEndpoint?: string;
  /** Extra environment for the handlers (e.g. AUTH_CACHE_TTL_MS=0 in tests). */
  env?: Record<string, string>;
}

export interface LocalStack {
  url: string;
  port: number;
  adminKey: string;
  adminKeyGenerated: boolean;
  tableName: string;
  dynamoEndpoint: string;
  stop(): Promise<void>;
}

export class PortInUseError extends Error {
  constructor(readonly port: number) {
    super(`port ${port} is already in use`);
    this.name = 'PortInUseError';
  }
}

export async function startLocalStack(opts: LocalStackOptions = {}): Promise<LocalStack> {
  const adminKeyGenerated = !opts.adminKey;
  const adminKey = opts.adminKey ?? `adm_${randomBytes(24).toString('base64url')}`;
  const tableName = opts.tableName ?? 'agent-payments-local';
  let dynamo: DynamoDbLocal | undefined;
  const stops: (() => Promise<void>)[] = [];
  try {
    let endpoint = opts.dynamoEndpoint;
    if (!endpoint) {
      dynamo = await startDynamoDbLocal({ inMemory: opts.inMemory ?? false, dataDir: opts.dataDir ?? `${PROJECT_ROOT}/.data/dynamodb` });
      endpoint = dynamo.endpoint;
      stops.push(() => (dynamo ? dynamo.stop() : Promise.resolve()));
    }
    await ensureTable(endpoint, tableName);

    Object.assign(process.env, {
      TABLE_NAME: tableName,
      DYNAMODB_ENDPOINT: endpoint,
      ADMIN_KEY: adminKey,
      LOCAL: '1',
      AWS_REGION: process.env.AWS_REGION ?? 'us-east-1',
      ...opts.env,
    });
    resetConfig();
    resetDbClient();
    resetAdminKey();
    clearAuthCache();

    const routes: LoadedRoute[] = [];
    for (const spec of ROUTES) {
      const mod = (await import(`../../${handlerEntry(spec).replace(/\.ts$/, '')}`)) as { handler: RouteHandler };
      routes.push({ spec, handler: mod.handler });
    }
    const server = createServer(createRequestListener(routes));
    server.keepAliveTimeout = 5_000;
    const port = await listen(server, opts.port ?? 3000, opts.host ?? '127.0.0.1');
    stops.unshift(
      () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    );
    const host = opts.host ?? '127.0.0.1';
    return {
      url: `http://${host}:${port}`,
      port,
      adminKey,
      adminKeyGenerated,
      tableName,
      dynamoEndpoint: endpoint,
      stop: async () => {
        for (const stop of stops) await stop();
        resetDbClient();
      },
    };
  } catch (error) {
    for (const stop of stops) await stop().catch(() => undefined);
    throw error;
  }
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(error.code === 'EADDRINUSE' ? new PortInUseError(port) : error));
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}
