/**
 * The DynamoDB Local the service tests use, renewed every few test files.
 *
 * Why not one for the whole run: DynamoDB Local keeps every table's stream records (for 24 h, as
 * DynamoDB does, deleted tables' too), and each write to a table with a stream costs more the more
 * records the other tables' streams hold. Measured (4 concurrent 4-item transactions): 4 ms a
 * write on a fresh instance, 15 ms once ten other tables held 800 stream records each, whether or
 * not those tables had been deleted. Every test file gets its own table with a stream, so late in a
 * run every write was several times slower, and CI's run took 137 s for a file that takes 25 s
 * alone (docs/testing.md "One DynamoDB Local, renewed").
 *
 * So the run's global setup starts this pool: a file's test environment (./environment.ts) leases
 * the current instance for the file's lifetime; after `filesPerInstance` leases the next instance
 * (started ahead, so no file waits for Java) becomes current, and the old one stops when its last
 * file is done. Both workers share the current instance, as before.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type DynamoDbLocal, startDynamoDbLocal } from '../../bin/local/dynamodb-local';

interface Instance {
  dynamo: DynamoDbLocal;
  leases: number;
  active: number;
  retired: boolean;
}

export interface DynamoPool {
  /** Where test environments lease from (POST /lease, POST /release/{id}). */
  url: string;
  /** Instances started so far (for the run's log). */
  started(): number;
  stop(): Promise<void>;
}

/**
 * The JVM of a pooled instance: the client compiler only and the serial collector. An instance
 * lives for a few files (a minute or two), never long enough for the optimizing compiler's work to
 * pay back, and a run starts dozens of them: with the JVM's defaults (both compilers, G1) most of
 * DynamoDB Local's CPU went to compiling and collecting. Measured (npx jest --maxWorkers=2 on six
 * e2e files, two instances, a loaded machine): DynamoDB Local's CPU 61.4 s → 34.5 s, the run's
 * user CPU 106 s → 71 s. `npm start` keeps the defaults (bin/local/dynamodb-local.ts): it runs for hours.
 */
const TEST_JVM_FLAGS = ['-Xms64m', '-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'] as const;

export async function startDynamoPool(opts: { filesPerInstance: number }): Promise<DynamoPool> {
  const start = () => startDynamoDbLocal({ inMemory: true, jvmFlags: TEST_JVM_FLAGS });
  const instances = new Map<string, Instance>();
  let count = 0;
  const add = async (): Promise<[string, Instance]> => {
    const id = String(++count);
    const instance: Instance = { dynamo: await start(), leases: 0, active: 0, retired: false };
    instances.set(id, instance);
    return [id, instance];
  };
  let current = await add();
  let next: Promise<[string, Instance]> | undefined;
  const stopIfDone = async (id: string, instance: Instance) => {
    if (!instance.retired || instance.active > 0) return;
    instances.delete(id);
    await instance.dynamo.stop();
  };

  const switchOver = async () => {
    if (current[1].leases >= opts.filesPerInstance) {
      const [oldId, old] = current;
      old.retired = true;
      current = await (next ?? add());
      next = undefined;
      void stopIfDone(oldId, old).catch(() => undefined);
    }
  };
  // One lease at a time: two files arriving together at a switch share the next instance.
  let queue: Promise<unknown> = Promise.resolve();
  const lease = () => {
    const leased = queue.then(switchOver).then(() => take());
    queue = leased.catch(() => undefined);
    return leased;
  };
  const take = () => {
    const [id, instance] = current;
    instance.leases += 1;
    instance.active += 1;
    // Start the next one while the last files of this one run.
    if (instance.leases >= opts.filesPerInstance - 1 && !next) {
      next = add();
      next.catch(() => undefined); // a failed start is thrown at the lease that needs it
    }
    return { id, endpoint: instance.dynamo.endpoint };
  };
  const release = async (id: string) => {
    const instance = instances.get(id);
    if (!instance) return;
    instance.active = Math.max(0, instance.active - 1);
    await stopIfDone(id, instance);
  };

  const server: Server = createServer((req, res) => {
    const answer = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const released = /^\/release\/(\w+)$/.exec(req.url ?? '');
    const work =
      req.method === 'POST' && req.url === '/lease'
        ? lease()
        : req.method === 'POST' && released
          ? release(released[1] ?? '').then(() => ({}))
          : Promise.resolve(undefined);
    work.then(
      (body) => (body === undefined ? answer(404, { error: 'not found' }) : answer(200, body)),
      (error: unknown) => answer(500, { error: error instanceof Error ? error.message : String(error) }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    started: () => count,
    stop: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      const pending = next;
      next = undefined;
      if (pending) await pending.catch(() => undefined);
      await Promise.all([...instances.values()].map((instance) => instance.dynamo.stop()));
      instances.clear();
    },
  };
}
