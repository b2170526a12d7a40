/**
 * How every stateful resource leaves a stack (the table, the secrets, the hot wallet's key and
 * every log group): a deploy that drops or replaces one, or a deleted stack, keeps it: the data and
 * the audit trail outlive the stack.
 *
 * `STATEFUL_REMOVAL` (CloudFormation `RetainExceptOnCreate`, `UpdateReplacePolicy: Retain`): when
 * the operation that *created* it rolls back (a failed first deploy), it is deleted with it, so a
 * named secret does not linger to fail the retry with "already exists".
 *
 * `PROTECTED_REMOVAL` (`Retain` always) for what has deletion protection, the table: a rollback
 * that tried to delete it would be refused by DynamoDB and end in ROLLBACK_FAILED, a stack only a
 * person can clear. Retained, the rollback completes (the next deploy replaces the failed stack by
 * itself) and leaves the new, empty table behind; its name is generated, so it is in no one's way
 * (docs/operating/first-deploy.md "If the first deploy fails" says how to delete it).
 */
import { RemovalPolicy } from 'aws-cdk-lib';

export const STATEFUL_REMOVAL = RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE;
export const PROTECTED_REMOVAL = RemovalPolicy.RETAIN;
