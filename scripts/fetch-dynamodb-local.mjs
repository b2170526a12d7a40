#!/usr/bin/env node
// Fetches the real DynamoDB Local jar once into .cache/dynamodb-local.
//
// Why not a normal dependency: the npm package that ships the jar (amplify-dynamodb-simulator)
// drags in ~350 MB of Amplify dependencies. Its tarball alone holds the jar and native libs, so we
// `npm pack` that exact version and unpack only `emulator/`. The cache lives in the project folder
// (git-ignored), survives `npm ci`, and is reused by `npm start` and `npm test`.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE = 'amplify-dynamodb-simulator@2.9.30';
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const target = join(root, '.cache', 'dynamodb-local');
const jar = join(target, 'DynamoDBLocal.jar');

if (existsSync(jar)) process.exit(0);
const work = join(root, '.cache', `dynamodb-local-tmp-${process.pid}`);
mkdirSync(work, { recursive: true });
try {
  console.log(`[dynamodb-local] fetching ${PACKAGE} (jar only, ~56 MB, once)`);
  execFileSync('npm', ['pack', PACKAGE, '--silent', '--pack-destination', work], { stdio: ['ignore', 'ignore', 'inherit'] });
  const tgz = readdirSync(work).find((f) => f.endsWith('.tgz'));
  if (!tgz) throw new Error('npm pack produced no tarball');
  execFileSync('tar', ['xzf', join(work, tgz), '-C', work, 'package/emulator']);
  rmSync(target, { recursive: true, force: true });
  renameSync(join(work, 'package', 'emulator'), target);
  if (!existsSync(jar)) throw new Error(`DynamoDBLocal.jar missing from ${PACKAGE}`);
  console.log(`[dynamodb-local] ready in ${target}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
