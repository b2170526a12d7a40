/** Reads a secret's string value from AWS Secrets Manager (client built once, on first use). */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { config } from '../config';

let client: SecretsManagerClient | undefined;

export async function readSecretString(secretId: string): Promise<string> {
  client ??= new SecretsManagerClient({ region: config().AWS_REGION });
  const out = await client.send(new GetSecretValueCommand({ SecretId: secretId }));
  if (!out.SecretString) throw new Error('secret has no string value');
  return out.SecretString;
}
