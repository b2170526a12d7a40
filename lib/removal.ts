/**
 * How every stateful resource leaves a stack (the table, the secrets, the hot wallet's key and
 * every log group): CloudFormation `RetainExceptOnCreate`, `UpdateReplacePolicy: Retain`.
 * A deploy that drops or replaces one, or a deleted stack, keeps it: the data and the audit trail
 * outlive the stack. But when the operation that *created* it rolls back (a failed first deploy),
 * it is deleted with it, so a named secret does not linger to fail the retry with "already exists".
 */
import { RemovalPolicy } from 'aws-cdk-lib';

export const STATEFUL_REMOVAL = RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE;
