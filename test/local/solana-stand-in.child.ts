/**
 * The chain stand-in alone in a process of its own, as `npm start` runs it (its state in the file
 * named by argv[2]), so a test can SIGKILL it: prints its URL and demo payer as one JSON line.
 */
import { startLocalSolana } from '../../bin/local/solana-rpc';

const [stateFile] = process.argv.slice(2);
if (!stateFile) throw new Error('usage: solana-stand-in.child.ts <state file>');
void startLocalSolana({ stateFile, port: 0 }).then((chain) => {
  process.stdout.write(`${JSON.stringify({ url: chain.url, demoPayer: chain.demoPayer })}\n`);
});
