/**
 * The deploy's preflight (lib/deploy-preflight.ts), run by .github/workflows/deploy-stage.yml after
 * the synth and before `cdk deploy --app <assembly>`, with the GitHub deploy role's credentials:
 *
 *   npx tsx bin/deploy-preflight.ts <stack name> [<cloud assembly directory, default cdk.out>]
 *
 * Calls AWS through the AWS CLI (on every GitHub runner; no SDK client of ours covers STS, Lambda
 * and CloudFormation). Exit codes: 0 the deploy may start, 1 it must not (the message says why and
 * what to do), 2 could not run.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { type Aws, preflight } from '../lib/deploy-preflight';

const aws: Aws = (args, credentials) => {
  const env = credentials
    ? {
        ...process.env,
        AWS_ACCESS_KEY_ID: credentials.AccessKeyId,
        AWS_SECRET_ACCESS_KEY: credentials.SecretAccessKey,
        AWS_SESSION_TOKEN: credentials.SessionToken,
      }
    : process.env;
  try {
    const out = execFileSync('aws', [...args, '--output', 'json'], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return out.trim() === '' ? null : JSON.parse(out);
  } catch (error) {
    // The CLI's own message (e.g. "Stack with id … does not exist") is on stderr.
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new Error(`aws ${args.slice(0, 2).join(' ')}: ${stderr || (error instanceof Error ? error.message : String(error))}`);
  }
};

function main(): number {
  const [stackName, assembly = 'cdk.out'] = process.argv.slice(2);
  const region = process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
  if (!stackName || !region) {
    console.error('usage: AWS_REGION=<region> npx tsx bin/deploy-preflight.ts <stack name> [<cloud assembly directory>]');
    return 2;
  }
  const files = existsSync(assembly) ? readdirSync(assembly).filter((file) => file.endsWith('.template.json')) : [];
  const templates = files.map((file) => JSON.parse(readFileSync(path.join(assembly, file), 'utf8')));
  if (templates.length === 0) {
    console.error(`no templates in ${assembly}: synthesize first (npx cdk synth -o ${assembly})`);
    return 2;
  }
  try {
    preflight({ stackName, region, templates, aws, log: (line) => console.log(`preflight: ${line}`) });
    return 0;
  } catch (error) {
    // A GitHub Actions error annotation: it heads the run's summary.
    console.log(`::error title=deploy preflight::${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

process.exitCode = main();
