#!/usr/bin/env node
// Keeps package-lock.json acceptable to `npm ci` on this workplace's registry.
//
// Why: the registry reachable here lacks many platform-specific optional packages (e.g.
// @swc/core-darwin-arm64, litesvm-darwin-x64). `npm install` silently leaves such missing
// optionals out of the lock, and `npm ci` then refuses the lock as "out of sync". This script adds
// each missing optional as an entry tagged with the os/cpu/libc its name declares, so `npm ci`
// validates the lock and skips those entries on any other platform (they are never fetched here).
// Runs from postinstall; idempotent; changes nothing when the lock is already complete.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const lockPath = join(root, 'package-lock.json');
if (!existsSync(lockPath)) process.exit(0);
const lock = JSON.parse(readFileSync(lockPath, 'utf8'));
const packages = lock.packages ?? {};

const OS = ['darwin', 'linux', 'win32', 'android', 'freebsd', 'openharmony', 'aix', 'sunos', 'netbsd', 'openbsd'];
const CPU = {
  arm64: 'arm64',
  x64: 'x64',
  ia32: 'ia32',
  arm: 'arm',
  gnueabihf: 'arm',
  musleabihf: 'arm',
  eabi: 'arm',
  ppc64: 'ppc64',
  s390x: 's390x',
  riscv64: 'riscv64',
  loong64: 'loong64',
  mips64el: 'mips64el',
  wasm32: 'wasm32',
};

function platformOf(name) {
  const tokens = name.replace(/^@[^/]+\//, '').split(/[-_]/);
  const os = tokens.find((t) => OS.includes(t));
  const cpu = tokens.map((t) => CPU[t]).find(Boolean);
  if (cpu === 'wasm32') return { cpu: ['wasm32'] };
  if (!os || !cpu) return undefined;
  const platform = { os: [os], cpu: [cpu] };
  if (tokens.some((t) => t.startsWith('musl'))) platform.libc = ['musl'];
  else if (os === 'linux' && tokens.some((t) => t.startsWith('gnu'))) platform.libc = ['glibc'];
  return platform;
}

/** Is `dep` resolvable from the package at `location` (node's lookup: own node_modules, then up)? */
function resolvable(location, dep) {
  let base = location;
  for (;;) {
    if (packages[`${base ? `${base}/` : ''}node_modules/${dep}`]) return true;
    if (!base) return false;
    const cut = base.lastIndexOf('/node_modules/');
    base = cut === -1 ? '' : base.slice(0, cut);
  }
}

let added = 0;
for (const [location, entry] of Object.entries(packages)) {
  for (const [dep, spec] of Object.entries(entry.optionalDependencies ?? {})) {
    if (resolvable(location, dep)) continue;
    const platform = platformOf(dep);
    if (!platform) continue; // not a platform binary: leave it to npm
    const version = String(spec).replace(/^[~^=v]/, '');
    if (!/^\d+\.\d+\.\d+/.test(version)) continue;
    packages[`node_modules/${dep}`] = { version, optional: true, ...platform };
    added += 1;
  }
}
if (added > 0) {
  lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : 1)));
  writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
  console.log(`[lockfile] added ${added} platform-only optional entries so npm ci accepts the lock`);
}
