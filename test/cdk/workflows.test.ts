/**
 * The GitHub Actions workflows, parsed: what runs when, which refs may deploy, how actions are
 * referenced. GitHub settings (environments' branch rules and reviewers) are not in the repository;
 * docs/operating/first-deploy.md lists them, and these tests pin what the workflows themselves enforce.
 *
 * YAML parser: js-yaml, already installed (a dependency of Jest's coverage tooling), not a
 * dependency of ours; if it ever disappears, add `yaml` to devDependencies.
 */
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { PROJECT_ROOT, SOURCE_MAPS_DIR } from '../../lib/bundling';

// js-yaml 3 ships no types; only its safe loader is used.
const yaml = require('js-yaml') as { safeLoad(text: string): unknown };

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
}
interface Job {
  needs?: string | string[];
  environment?: { name: string } | string;
  steps?: Step[];
  uses?: string;
}
interface Workflow {
  on: Record<string, unknown>;
  jobs: Record<string, Job>;
}

const DIR = path.join(PROJECT_ROOT, '.github/workflows');
const files = readdirSync(DIR).filter((f) => f.endsWith('.yml'));
const text = (file: string) => readFileSync(path.join(DIR, file), 'utf8');
const workflow = (file: string) => yaml.safeLoad(text(file)) as Workflow;
/** A GitHub Actions expression as the workflow spells it: `${{ … }}`. */
const expression = (inner: string) => `\${{ ${inner} }}`;
const steps = (wf: Workflow) => Object.values(wf.jobs).flatMap((job) => job.steps ?? []);

describe('GitHub Actions workflows', () => {
  it('are the three expected files', () => {
    expect(files.sort()).toEqual(['ci.yml', 'deploy-stage.yml', 'deploy.yml']);
  });

  it('pin every third-party action by full commit SHA, with the tag in a comment', () => {
    for (const file of files) {
      const lines = text(file)
        .split('\n')
        .filter((l) => /^\s*-?\s*uses:/.test(l));
      for (const line of lines) {
        const ref = line.replace(/^\s*-?\s*uses:\s*/, '');
        if (ref.startsWith('./')) continue; // a workflow of this repository
        expect([file, ref]).toEqual([file, expect.stringMatching(/^[\w.-]+\/[\w./-]+@[0-9a-f]{40} # v\d+(\.\d+)*$/)]);
      }
    }
  });

  it('check out without persisting the token', () => {
    for (const file of files) {
      for (const step of steps(workflow(file)).filter((s) => s.uses?.startsWith('actions/checkout@'))) {
        expect([file, step.with?.['persist-credentials']]).toEqual([file, false]);
      }
    }
  });

  it('run CI once per change: on pull requests, and on main only through deploy.yml (no push trigger)', () => {
    const ci = workflow('ci.yml');
    expect(Object.keys(ci.on).sort()).toEqual(['pull_request', 'workflow_call']);
    const deploy = workflow('deploy.yml');
    expect(deploy.on.push).toEqual({ branches: ['main'] });
    expect(deploy.jobs.ci?.uses).toBe('./.github/workflows/ci.yml');
  });

  it('deploy staging then production, each after CI, never concurrently', () => {
    const deploy = workflow('deploy.yml') as Workflow & { concurrency: Record<string, unknown> };
    expect(deploy.jobs.staging).toMatchObject({ needs: 'ci', uses: './.github/workflows/deploy-stage.yml', with: { stage: 'staging' } });
    expect(deploy.jobs.production).toMatchObject({ needs: 'staging', with: { stage: 'production' } });
    expect(deploy.concurrency).toEqual({ group: 'deploy', 'cancel-in-progress': false });
  });

  it('refuse to deploy (or diff) from any ref but main, as the first step of each job', () => {
    const stage = workflow('deploy-stage.yml');
    for (const name of ['diff', 'deploy']) {
      const first = stage.jobs[name]?.steps?.[0];
      expect(first?.run).toContain('"$REF" != "refs/heads/main"');
      expect(first?.run).toContain('exit 1');
    }
  });

  it('write `cdk diff` into the job summary in a job the approval-gated deploy job waits for', () => {
    const stage = workflow('deploy-stage.yml');
    expect(stage.jobs.deploy?.needs).toBe('diff');
    // GitHub expressions, not template literals.
    const stageExpression = ['$', '{{ inputs.stage }}'].join('');
    expect(stage.jobs.diff?.environment).toEqual({ name: `${stageExpression}-diff` });
    expect(stage.jobs.deploy?.environment).toMatchObject({ name: stageExpression });
    const diff = stage.jobs.diff?.steps?.find((s) => s.run?.includes('cdk diff'));
    expect(diff?.run).toContain('GITHUB_STEP_SUMMARY');
    // The diff job assumes the read-only diff role, never the deploy role.
    expect(JSON.stringify(stage.jobs.diff)).not.toContain('AWS_DEPLOY_ROLE_ARN');
    expect(JSON.stringify(stage.jobs.diff)).toContain('AWS_DIFF_ROLE_ARN');
  });

  it('bound every curl with --max-time', () => {
    for (const file of files) {
      for (const step of steps(workflow(file)).filter((s) => s.run?.includes('curl '))) {
        expect([file, step.name, step.run]).toEqual([file, step.name, expect.stringMatching(/curl [^\n]*--max-time \d+/)]);
      }
    }
    expect(steps(workflow('deploy-stage.yml')).some((s) => s.run?.includes('curl '))).toBe(true);
  });

  it("keep each deploy's source maps (the zips carry none) as an artifact named by stage and commit, even when the deploy fails", () => {
    const job = workflow('deploy-stage.yml').jobs.deploy;
    const all = job?.steps ?? [];
    const deployAt = all.findIndex((s) => s.run?.includes('cdk deploy'));
    const upload = all.findIndex((s) => s.uses?.startsWith('actions/upload-artifact@'));
    expect(deployAt).toBeGreaterThanOrEqual(0);
    expect(upload).toBeGreaterThan(deployAt);
    const step = all[upload] as Step & { if?: string };
    expect(step.if).toBe(expression('!cancelled()'));
    expect(step.with).toMatchObject({
      name: `sourcemaps-${expression('inputs.stage')}-${expression('github.sha')}`,
      // Where lib/bundling.ts moves them (SOURCE_MAPS_DIR) under the default cloud assembly.
      path: `cdk.out/${SOURCE_MAPS_DIR}/`,
      'if-no-files-found': 'error',
    });
  });
});

describe('the deploy job (first-deploy traps, docs/operating/first-deploy.md "First deploy")', () => {
  const stage = workflow('deploy-stage.yml');
  const deploySteps = stage.jobs.deploy?.steps ?? [];
  const at = (predicate: (s: Step) => boolean) => deploySteps.findIndex(predicate);

  it('synthesizes, runs the preflight on that assembly, then deploys exactly it', () => {
    const synth = at((s) => s.run?.includes('cdk synth') === true);
    const preflight = at((s) => s.run?.includes('bin/deploy-preflight.ts') === true);
    const deploy = at((s) => s.run?.includes('cdk deploy') === true);
    expect(synth).toBeGreaterThan(0);
    expect(preflight).toBeGreaterThan(synth);
    expect(deploy).toBeGreaterThan(preflight);
    expect(deploySteps[synth]?.run).toContain('--output cdk.out');
    expect(deploySteps[preflight]?.run).toContain('"AgentPaymentService-$STAGE" cdk.out');
    // No synth of its own (context flags would make another assembly than the one checked).
    expect(deploySteps[deploy]?.run).toContain('--app cdk.out');
    expect(deploySteps[deploy]?.run).not.toContain(' -c ');
  });

  it('gives diff and deploy the same stage context, from the same GitHub variables', () => {
    const diff = stage.jobs.diff?.steps?.find((s) => s.run?.includes('cdk diff'));
    const synth = deploySteps.find((s) => s.run?.includes('cdk synth'));
    const contextOf = (step: Step | undefined) =>
      [...(step?.run ?? '').matchAll(/-c "(\w+)=\$(\w+)"/g)].map((m) => `${m[1]}=${m[2]}`).sort();
    expect(contextOf(synth)).toEqual(contextOf(diff));
    for (const variable of ['DOMAIN_NAME', 'CERTIFICATE_ARN', 'RESERVE_CONCURRENCY', 'PUBLIC_BASE_URL']) {
      expect(contextOf(synth).some((c) => c.endsWith(`=${variable}`))).toBe(true);
      for (const step of [diff, synth])
        expect((step as Step & { env?: Record<string, string> })?.env?.[variable]).toBe(expression(`vars.${variable}`));
    }
  });
});
