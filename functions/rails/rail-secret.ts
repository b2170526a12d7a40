/** A rail's secret from Secrets Manager, with "no value yet" reported as the operator's to fix. */
import type { ConfigKey } from '../config';
import { readSecretString, SecretNotSetError } from '../store/secrets';
import { RailConfigError } from './errors';

/**
 * Reads the secret that the configuration variable `variable` names. A secret with no value (the
 * stack creates the rail secrets empty until an operator puts one) becomes a RailConfigError naming
 * the variable and the secret, never a value, so the operator alarm (OPERATOR_RAIL_ERRORS) fires
 * instead of a generic worker error. Transient failures (throttling, network) pass through as they are.
 */
export async function readRailSecret(variable: ConfigKey, secretId: string): Promise<string> {
  try {
    return await readSecretString(secretId);
  } catch (error) {
    if (error instanceof SecretNotSetError) {
      throw new RailConfigError(`${variable}: secret ${secretId} has no value yet; put it (docs/deploy.md)`, { cause: error });
    }
    throw error;
  }
}
