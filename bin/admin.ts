/**
 * `npm run admin -- <command>`: the operator CLI (bin/operator/admin-cli.ts; `--help` lists the
 * commands, docs/operator-cli.md explains them).
 */
import { runAdmin } from './operator/admin-cli';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

runAdmin(process.argv.slice(2), { out: (text) => console.log(text), err: (text) => console.error(text) }).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
