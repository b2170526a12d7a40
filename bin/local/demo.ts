/**
 * A ready demo for newcomers: one user with a known user key and a starting balance. The key is
 * kept in .data/demo.json (local only) so a restart can print it again; in memory it is fresh.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export interface DemoUser {
  id: string;
  userKey: string;
}

export async function ensureDemoUser(baseUrl: string, adminKey: string, file: string | undefined): Promise<DemoUser> {
  if (file && existsSync(file)) {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as DemoUser;
    const res = await fetch(`${baseUrl}/api/v1/admin/users/${saved.id}`, { headers: { 'x-admin-key': adminKey } });
    if (res.ok) return saved;
  }
  const created = await fetch(`${baseUrl}/api/v1/admin/users`, { method: 'POST', headers: { 'x-admin-key': adminKey } });
  if (created.status !== 201) throw new Error(`could not create the demo user: ${created.status}`);
  const user = (await created.json()) as DemoUser;
  for (const currency of ['USD', 'USDC']) {
    const res = await fetch(`${baseUrl}/api/v1/admin/users/${user.id}/credits`, {
      method: 'POST',
      headers: { 'x-admin-key': adminKey, 'content-type': 'application/json', 'idempotency-key': `demo-seed-${user.id}-${currency}` },
      body: JSON.stringify({ amount: 100, currency }),
    });
    if (!res.ok) throw new Error(`could not credit the demo user: ${res.status}`);
  }
  if (file) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify(user, null, 2), { mode: 0o600 });
  }
  return user;
}
