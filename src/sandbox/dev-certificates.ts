import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../../certs/make-dev-certs.sh', import.meta.url));

/** Makes the development certificates (npm run certs) when the directory has none yet. */
export function ensureDevCertificates(certsDir: string): boolean {
  if (existsSync(`${certsDir}/ca.pem`) && existsSync(`${certsDir}/tpp.key`)) return false;
  execFileSync('bash', [SCRIPT, certsDir], { stdio: ['ignore', 'ignore', 'inherit'] });
  return true;
}
