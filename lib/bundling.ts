/**
 * How every function is bundled, in one place. The stack hands these options to NodejsFunction
 * (which runs the local esbuild, no Docker); the bundle-size test hands the same options to
 * esbuild's API directly so it can build all functions in parallel.
 *
 * Source maps are built but never shipped in a function's zip: on a synth, each function's map
 * moves out of its asset directory into `<cloud assembly>/sourcemaps/<construct path>/index.mjs.map`
 * (`cdk.out/sourcemaps/…` by default), an artifact of the synth kept for offline symbolication
 * (docs/operating/stack.md, "Design notes": stack traces). The zip then holds `index.mjs` alone.
 */
import * as path from 'node:path';
import { type BundlingOptions, type ICommandHooks, LogLevel, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { BuildOptions } from 'esbuild';

export const PROJECT_ROOT = path.resolve(__dirname, '..');

/** Lambda's Node.js major; esbuild's target follows it. */
export const NODE_TARGET = 'node24';

/**
 * ESM output still meets CommonJS dependencies that call `require('node:…')`; esbuild's ESM
 * output has no `require`, so give it one.
 */
const REQUIRE_SHIM = "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);";

/**
 * Lambda gets its credentials in environment variables only; the SDK's default provider chain
 * (INI, SSO, IMDS, … and the clients they need) is ~130 KB of every bundle. See the shim.
 */
const ALIAS = { '@aws-sdk/credential-provider-node': './lib/shims/env-credentials.ts' } as const;

const SHARED = {
  format: 'esm',
  target: NODE_TARGET,
  /** Prefer packages' ES module builds: smaller bundles, better tree shaking. */
  mainFields: ['module', 'main'],
  minify: true,
  /** Minified, but class and function names survive: error names in logs stay readable. */
  keepNames: true,
  sourcemap: true,
  /** Stack traces map to file:line; the sources themselves stay out of the artifact. */
  sourcesContent: false,
  /** Nothing external: the AWS SDK v3 is bundled (pinned version, fewer files to load on cold start). */
  external: [] as string[],
  banner: REQUIRE_SHIM,
} as const;

/** Where the synth leaves the functions' source maps, relative to the cloud assembly directory. */
export const SOURCE_MAPS_DIR = 'sourcemaps';
/** The bundle NodejsFunction writes, and its map. */
const BUNDLE_FILE = 'index.mjs';

/** A construct path as a directory under SOURCE_MAPS_DIR (it goes into a shell command: nothing but safe characters). */
export function sourceMapDir(constructPath: string): string {
  if (!/^[A-Za-z0-9_./-]+$/.test(constructPath) || constructPath.split('/').includes('..')) {
    throw new Error(`not usable as a source map directory: ${constructPath}`);
  }
  return `${SOURCE_MAPS_DIR}/${constructPath}`;
}

/**
 * After esbuild: move the map out of the asset directory. Local bundling builds in a directory
 * directly under the cloud assembly (`<outdir>/bundling-temp-…-building`, then renamed to
 * `asset.<hash>`), so `<outputDir>/..` is the assembly. The asset hash is taken afterwards, from
 * what is left: the bundle alone.
 */
function sourceMapsOutOfTheZip(constructPath: string): ICommandHooks {
  const dir = sourceMapDir(constructPath);
  return {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (_inputDir, outputDir) => [
      `mkdir -p "${outputDir}/../${dir}"`,
      `mv -f "${outputDir}/${BUNDLE_FILE}.map" "${outputDir}/../${dir}/${BUNDLE_FILE}.map"`,
    ],
  };
}

/** Options for NodejsFunction's `bundling`; `constructPath` names where the function's source map goes. */
export function nodejsBundling(constructPath: string): BundlingOptions {
  return {
    format: OutputFormat.ESM,
    target: SHARED.target,
    mainFields: [...SHARED.mainFields],
    minify: SHARED.minify,
    keepNames: SHARED.keepNames,
    sourceMap: SHARED.sourcemap,
    sourcesContent: SHARED.sourcesContent,
    externalModules: [...SHARED.external],
    banner: SHARED.banner,
    // NodejsFunction runs esbuild in the project root, where the relative alias target resolves.
    esbuildArgs: { '--alias': Object.entries(ALIAS).map(([from, to]) => `${from}=${to}`) },
    forceDockerBundling: false,
    // Warnings and errors only: `cdk synth -q` stays quiet.
    logLevel: LogLevel.WARNING,
    commandHooks: sourceMapsOutOfTheZip(constructPath),
  };
}

/** The same bundle through esbuild's API (what NodejsFunction passes on its command line). */
export function esbuildOptions(entry: string, outfile: string): BuildOptions {
  return {
    entryPoints: [path.resolve(PROJECT_ROOT, entry)],
    outfile,
    bundle: true,
    platform: 'node',
    format: SHARED.format,
    target: SHARED.target,
    mainFields: [...SHARED.mainFields],
    minify: SHARED.minify,
    keepNames: SHARED.keepNames,
    sourcemap: SHARED.sourcemap,
    sourcesContent: SHARED.sourcesContent,
    external: [...SHARED.external],
    banner: { js: SHARED.banner },
    alias: { ...ALIAS },
    absWorkingDir: PROJECT_ROOT,
    logLevel: 'silent',
  };
}
