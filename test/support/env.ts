/**
 * Runs before each test file: points the config module at a table of the file's own, so files
 * never see each other's data. The service tests' environment (./environment.ts) then points it at
 * the DynamoDB Local the file leased; unit tests keep an endpoint that answers nothing.
 *
 * This environment is the tests' own, not any function's: code a test runs as a function
 * (`asFunction`, as the local stack runs each of them) reads only what that function's Lambda is
 * given on AWS (bin/local/function-environments.ts). Issue 38: the approval secret set here for
 * every test hid a console that was given none.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { functionEnvironment } from '../../bin/local/function-environments';
import { currentFunction } from '../../bin/local/function-scope';
import { LOCAL_SIGNER_FUNCTION_NAME, loadLocalSigner } from '../../bin/local/signer';
import { useFunctionEnvironments } from '../../functions/config';
import { useInProcessSigner } from '../../functions/rails/hot-wallet-signer';

process.env.TABLE_NAME = `test-${randomBytes(6).toString('hex')}`;
process.env.DYNAMODB_ENDPOINT = process.env.TEST_DYNAMODB_ENDPOINT ?? 'http://127.0.0.1:1';
process.env.LOCAL = '1';
process.env.AWS_REGION = 'us-east-1';
process.env.ADMIN_KEY = 'test-admin-key-0123456789';
process.env.APPROVAL_SECRET = 'test-approval-secret-0123456789abcdef';
// Stored idempotent answers that hold a secret are sealed with it (functions/store/answer-seal.ts; KMS on AWS): one per file.
process.env.IDEMPOTENCY_LOCAL_SECRET_KEY = randomBytes(32).toString('base64');
// Receipts are signed with it (functions/receipts/; KMS on AWS): one per file.
process.env.RECEIPT_LOCAL_KEY = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
  .privateKey.export({ format: 'pem', type: 'pkcs8' })
  .toString();
process.env.LOG_LEVEL = 'SILENT';
process.env.SIGNER_FUNCTION_NAME = LOCAL_SIGNER_FUNCTION_NAME;
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

useFunctionEnvironments({ current: currentFunction, environment: (name) => functionEnvironment(name, process.env) });
// The hot-wallet signer runs in-process, as under `npm start` (bin/local/stack.ts): tests that pay or
// settle without the local stack reach the same signer code.
useInProcessSigner(loadLocalSigner);
