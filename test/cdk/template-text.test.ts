/**
 * Text CloudFormation refuses. Jest's template assertions do not run CloudFormation's own
 * validation, so an arrow in a function description (copied onto its IAM role's description)
 * passed every test here while `npm run synth` failed for every stage (F3031). This walks every
 * description and name in the synthesized templates of both deployed kinds of stage (the parent
 * and each nested stack's template, as CloudFormation receives them) and checks them against the
 * patterns and lengths CloudFormation and IAM enforce.
 */
import { synthesize } from './support';

/** IAM's (and CloudFormation's) pattern for descriptions: tab, newline, CR, printable ASCII and Latin-1. */
const DESCRIPTION = /^[\u0009\u000A\u000D\u0020-\u007E\u00A1-\u00FF]*$/;
/** Names (alarms, dashboards, APIs, queues, roles...): printable ASCII only. */
const NAME = /^[\u0020-\u007E]*$/;
/** The tightest length limits among the resource types the stack has. */
const MAX_LENGTH: Record<string, Record<string, number>> = {
  'AWS::Lambda::Function': { Description: 256 },
  'AWS::IAM::Role': { Description: 1000 },
  'AWS::CloudWatch::Alarm': { AlarmDescription: 1024, AlarmName: 255 },
};

interface Finding {
  path: string;
  value: string;
  problem: string;
}

/** Every string-valued property whose key ends in Description or Name, at any depth. */
function textProperties(value: unknown, path: string, out: { path: string; key: string; value: string }[]): void {
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) textProperties(v, `${path}[${i}]`, out);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  for (const [key, v] of Object.entries(value)) {
    const here = `${path}.${key}`;
    if (typeof v === 'string' && /(Description|Name)$/.test(key)) out.push({ path: here, key, value: v });
    else textProperties(v, here, out);
  }
}

/** CloudFormation's limit on a template's own Description. */
const TEMPLATE_DESCRIPTION_MAX = 1024;

function refusedText(template: Record<string, unknown>): Finding[] {
  const findings: Finding[] = [];
  if (typeof template.Description === 'string') {
    if (!DESCRIPTION.test(template.Description))
      findings.push({ path: 'Description', value: template.Description, problem: 'characters outside Latin-1' });
    if (template.Description.length > TEMPLATE_DESCRIPTION_MAX) {
      findings.push({ path: 'Description', value: template.Description, problem: `longer than ${TEMPLATE_DESCRIPTION_MAX}` });
    }
  }
  const resources = (template.Resources ?? {}) as Record<string, { Type: string; Properties?: unknown }>;
  for (const [id, resource] of Object.entries(resources)) {
    const found: { path: string; key: string; value: string }[] = [];
    textProperties(resource.Properties, id, found);
    for (const { path, key, value } of found) {
      const pattern = /Description$/.test(key) ? DESCRIPTION : NAME;
      if (!pattern.test(value)) findings.push({ path, value, problem: `characters outside ${pattern.source}` });
      const max = MAX_LENGTH[resource.Type]?.[key];
      if (max !== undefined && value.length > max) findings.push({ path, value, problem: `longer than ${max}` });
    }
  }
  const outputs = (template.Outputs ?? {}) as Record<string, { Description?: unknown }>;
  for (const [id, output] of Object.entries(outputs)) {
    if (typeof output.Description === 'string' && !DESCRIPTION.test(output.Description)) {
      findings.push({ path: `Outputs.${id}.Description`, value: output.Description, problem: 'characters outside Latin-1' });
    }
  }
  return findings;
}

describe('text in the template', () => {
  it.each([
    ['dev-like', {}],
    ['production', { stage: 'production', alarmEmail: 'alarms@example.com', publicBaseUrl: 'https://pay.example.com', paypalMode: 'live' }],
  ])('every description and name in the %s templates, parent and nested, is text CloudFormation accepts', (_kind, overrides) => {
    const { templates } = synthesize(overrides);
    expect(templates.length).toBeGreaterThan(1);
    for (const { stack, template } of templates) {
      expect([stack.node.path, refusedText(template.toJSON())]).toEqual([stack.node.path, []]);
    }
  });

  it('finds an arrow in a role description, as CloudFormation does', () => {
    const template = {
      Resources: {
        Role: { Type: 'AWS::IAM::Role', Properties: { Description: 'stream → queue' } },
        Fn: { Type: 'AWS::Lambda::Function', Properties: { Description: 'x'.repeat(257) } },
        Alarm: { Type: 'AWS::CloudWatch::Alarm', Properties: { AlarmName: 'café' } },
      },
    };
    expect(refusedText(template).map((f) => f.path)).toEqual(['Role.Description', 'Fn.Description', 'Alarm.AlarmName']);
  });
});
