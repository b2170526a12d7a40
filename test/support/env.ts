/**
 * Runs before each test file: points the config module at a table of the file's own, so files
 * never see each other's data. The service tests' environment (./environment.ts) then points it at
 * the DynamoDB Local the file leased; unit tests keep an endpoint that answers nothing.
 */
import { randomBytes } from 'node:crypto';
import { useInProcessSigner } from '../../functions/rails/hot-wallet-signer';

process.env.TABLE_NAME = `test-${randomBytes(6).toString('hex')}`;
process.env.DYNAMODB_ENDPOINT = process.env.TEST_DYNAMODB_ENDPOINT ?? 'http://127.0.0.1:1';
process.env.LOCAL = '1';
process.env.AWS_REGION = 'us-east-1';
process.env.ADMIN_KEY = 'test-admin-key-0123456789';
process.env.APPROVAL_SECRET = 'test-approval-secret-0123456789abcdef';
process.env.LOG_LEVEL = 'SILENT';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

// The hot-wallet signer runs in-process, as under `npm start` (bin/local/stack.ts): tests that pay or
// settle without the local stack reach the same signer code.
useInProcessSigner(() => import('../../functions/signer/sign').then((signer) => signer.inProcessSigner()));
