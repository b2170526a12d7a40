/**
 * `npm start`: the whole service on this machine. Environment: PORT (3000), ADMIN_KEY (generated
 * and printed when unset), IN_MEMORY=1 for a throwaway database (otherwise data persists in .data/),
 * PUBLIC_BASE_URL (where approval links and the console point; default http://localhost:<PORT>). GET /health answers
 * 503 until everything below is printed, then 200.
 */
import { join } from 'node:path';
import { ensureDemoUser, writeDemoPayerFile } from './local/demo';
import { PROJECT_ROOT } from './local/dynamodb-local';
import { recordRunning } from './local/running';
import { PortInUseError, startLocalStack } from './local/stack';

/** How long a stop may take before the process exits anyway (a stuck poller must not keep it up). */
const STOP_GRACE_MS = 10_000;

async function main(): Promise<void> {
  // Lambda runs Node 24; local development may run Node 20, whose SDK notice is noise here.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const inMemory = process.env.IN_MEMORY === '1' || process.env.IN_MEMORY === 'true';
  const port = process.env.PORT ? Number(process.env.PORT) : 3000;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`PORT must be a port number, got ${process.env.PORT}`);
    process.exit(1);
  }
  if (process.env.ADMIN_KEY !== undefined && process.env.ADMIN_KEY.length < 16) {
    console.error('ADMIN_KEY must be at least 16 characters');
    process.exit(1);
  }
  console.log(`starting DynamoDB Local (${inMemory ? 'in memory' : 'data in .data/'}) …`);
  let stack: Awaited<ReturnType<typeof startLocalStack>> | undefined;
  let stopping = false;
  let cleanUp = () => {};
  // The database gone, every request would answer `service busy` forever: say so and stop, non-zero.
  const databaseDied = async (reason: string) => {
    if (stopping) return;
    stopping = true;
    console.error(
      `\nerror: ${reason}\n` +
        'npm start cannot serve without its database, so it stops here instead of answering "service busy" to every request.\n' +
        `Start it again with npm start${inMemory ? ' (IN_MEMORY=1: the data is gone)' : ' (the data in .data/ is kept)'}; ` +
        'if DynamoDB Local keeps dying, its last words above say why (memory, Java, a damaged .data/dynamodb).',
    );
    cleanUp();
    setTimeout(() => process.exit(1), STOP_GRACE_MS).unref();
    await stack?.stop().catch(() => undefined);
    process.exit(1);
  };
  try {
    stack = await startLocalStack({
      port,
      inMemory,
      ...(process.env.ADMIN_KEY ? { adminKey: process.env.ADMIN_KEY } : {}),
      // Links (approval pages) and the console live here; default: this server as http://localhost:<port>,
      // a host name because a passkey's relying party cannot be an IP address (docs/console.md).
      publicBaseUrl: process.env.PUBLIC_BASE_URL ?? `http://localhost:${port}`,
      env: {
        LOG_LEVEL: process.env.LOG_LEVEL ?? 'WARN',
        // This server is the console's address unless PUBLIC_BASE_URL names another (a proxy in front):
        // then a GET on 127.0.0.1 goes to localhost, where the passkeys live (docs/deploy.md, "Addresses").
        CONSOLE_HOST_REDIRECT: process.env.CONSOLE_HOST_REDIRECT ?? (process.env.PUBLIC_BASE_URL ? '0' : '1'),
      },
      // /health says "ready" only once the banner below is out (README: a script may wait for it).
      holdHealthUntilOpen: true,
      onDynamoDbExit: (reason) => void databaseDied(reason),
    });
  } catch (error) {
    if (error instanceof PortInUseError) {
      console.error(`error: port ${error.port} is already in use. Stop whatever uses it, or run with PORT=<another port> npm start.`);
    } else {
      console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
    }
    process.exit(1);
  }
  const demo = await ensureDemoUser(stack.url, stack.adminKey, inMemory ? undefined : join(PROJECT_ROOT, '.data', 'demo.json'));
  // The funded demo payer of the local chain, for paying USDC top-ups (bin/pay-topup.ts).
  const { solana } = stack.rails;
  // In memory: a temporary folder of its own (another stack on this machine writes its own).
  const demoPayer = writeDemoPayerFile(
    { publicKey: solana.demoPayer.publicKey, secretKey: solana.demoPayer.secretKey, rpcUrl: solana.url, usdcMint: solana.mint },
    { inMemory, dataDir: join(PROJECT_ROOT, '.data') },
  );
  const payTopup = inMemory ? `DEMO_PAYER=${demoPayer.file} npx tsx bin/pay-topup.ts` : 'npx tsx bin/pay-topup.ts';
  // Where this stack runs, for `npm run audit` and `npm run admin` with no table named (bin/local/running.ts).
  const unrecord = recordRunning({
    pid: process.pid,
    port: stack.port,
    url: stack.url,
    inMemory,
    dynamoEndpoint: stack.dynamoEndpoint,
    tableName: stack.tableName,
    solana: {
      url: solana.url,
      mint: solana.mint,
      hotWallet: solana.hotWallet.publicKey,
      depositWallet: solana.depositWallet,
      x402PayTo: solana.hotWallet.publicKey,
    },
    startedAt: new Date().toISOString(),
  });
  cleanUp = () => {
    unrecord();
    demoPayer.remove();
  };
  process.once('exit', () => cleanUp());

  const running = stack;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: stopping …`);
    cleanUp();
    await running.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));

  console.log(`
Agent Payment Service running at ${stack.url}

  admin key   ${stack.adminKey}${stack.adminKeyGenerated ? '   (generated; set ADMIN_KEY to choose one)' : ''}
  demo user   ${demo.id}
  user key    ${demo.userKey}   (balance starts at 100 USD and 100 USDC)
  solana rpc  ${solana.url}   (local LiteSVM node presenting itself as devnet, ${solana.network}; USDC mint ${solana.mint})
  demo payer  ${solana.demoPayer.publicKey}   (SOL and devnet-mint USDC; keypair in ${demoPayer.file})
  console     ${process.env.PUBLIC_BASE_URL ? process.env.PUBLIC_BASE_URL.replace(/\/+$/, '') : `http://localhost:${stack.port}`}/console   (sign up with a passkey, or sign in with the user key above)
  x402        facilitator URL ${stack.url}/x402   (exact on ${solana.network}; pay to ${solana.hotWallet.publicKey}; docs/x402.md "Get paid by x402 clients")

Try it:
  export BASE=${stack.url} ADMIN_KEY=${stack.adminKey} USER_KEY=${demo.userKey}${inMemory ? ` DEMO_PAYER=${demoPayer.file}` : ''}
  curl -s $BASE/health
  curl -s -X POST $BASE/api/v1/agents/register -H 'content-type: application/json' \\
       -d '{"name":"my-agent","email":"dev@example.com","website":"https://example.com"}'
  (then enable it, charge the demo user, … — the README's walkthrough has every step, docs/ the rest)
  Top up with USDC (Solana Pay) and pay it with the demo payer:
  URL=$(curl -s -X POST $BASE/api/v1/users/me/topups -H "x-user-key: $USER_KEY" -H 'content-type: application/json' \\
        -d '{"currency":"USDC"}' | node -pe 'JSON.parse(require("fs").readFileSync(0)).solanaPayUrl')
  ${payTopup} "$URL" 25

Ctrl-C stops everything.`);
  // After the banner, never before: a script that polls /health reads every line above once it answers 200.
  stack.open();
}

void main();
