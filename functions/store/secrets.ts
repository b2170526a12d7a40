/** Reads a secret's string value from AWS Secrets Manager (client built once, on first use). */
import { GetSecretValueCommand, type GetSecretValueCommandOutput, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { config } from '../config';

/**
 * The secret holds no usable value: it was created empty and no value has been put yet (Secrets
 * Manager answers ResourceNotFoundException: no AWSCURRENT version), it does not exist, or its
 * value is empty or blank. An operator's to fix, not a transient failure. The message names the
 * secret, never a value.
 */
export class SecretNotSetError extends Error {
  constructor(
    readonly secretId: string,
    options?: { cause?: unknown },
  ) {
    super(`secret ${secretId} has no value yet`, options);
    this.name = 'SecretNotSetError';
  }
}

let client: SecretsManagerClient | undefined;

/** The shared client (tests add fault-injecting middleware to its stack, as test/faults does for DynamoDB). */
export function secretsClient(): SecretsManagerClient {
  client ??= new SecretsManagerClient({ region: config().AWS_REGION });
  return client;
}

export async function readSecretString(secretId: string): Promise<string> {
  let out: GetSecretValueCommandOutput;
  try {
    out = await secretsClient().send(new GetSecretValueCommand({ SecretId: secretId }));
  } catch (error) {
    // By name: an exception class from another copy of the SDK would fail `instanceof`.
    if (error instanceof Error && error.name === 'ResourceNotFoundException') throw new SecretNotSetError(secretId, { cause: error });
    throw error;
  }
  if (!out.SecretString?.trim()) throw new SecretNotSetError(secretId);
  return out.SecretString;
}
