/**
 * Runs before each test file: points the config module at a table of the file's own, so files
 * never see each other's data. The service tests' environment (./environment.ts) then points it at
 * the DynamoDB Local the file leased; unit tests keep an endpoint that answers nothing.
 */
import { randomBytes } from 'node:crypto';

process.env.TABLE_NAME = `test-${randomBytes(6).toString('hex')}`;
process.env.DYNAMODB_ENDPOINT = process.env.TEST_DYNAMODB_ENDPOINT ?? 'http://127.0.0.1:1';
process.env.LOCAL = '1';
process.env.AWS_REGION = 'us-east-1';
process.env.ADMIN_KEY = 'test-admin-key-0123456789';
process.env.APPROVAL_SECRET = 'test-approval-secret-0123456789abcdef';
// Stored idempotent answers that hold a secret are sealed with it (functions/store/answer-seal.ts; KMS on AWS): one per file.
process.env.IDEMPOTENCY_LOCAL_SECRET_KEY = randomBytes(32).toString('base64');
process.env.LOG_LEVEL = 'SILENT';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
