// The commands that work on files, without the database: backup, restore, cert:inspect.
import { readFileSync } from 'node:fs';
import { loadConfig } from '../platform/config/app-config.js';
import { backupEmbedded, backupPostgres, restoreEmbedded } from '../platform/database/backup.js';
import { readCertificateChain } from '../shared/qwac/qwac-reader.js';
import { required, type CommandContext } from './commands.js';

export async function backup(context: CommandContext): Promise<number> {
  const file = required(context.args, 0, '<file>');
  const { database } = loadConfig();
  const bytes = database.url
    ? await backupPostgres(database.url, file)
    : await backupEmbedded(database.embeddedDir, file);
  context.out(
    `backed up ${database.url ? 'PostgreSQL (pg_dump custom format)' : `the embedded engine's ${database.embeddedDir}`} into ${file} (${bytes} bytes)`,
  );
  return 0;
}

export async function restore(context: CommandContext): Promise<number> {
  const file = required(context.args, 0, '<file>');
  const directory = required(context.args, 1, '<new data directory>');
  await restoreEmbedded(file, directory);
  context.out(`restored ${file} into ${directory}: start with EMBEDDED_DB_DIR=${directory}`);
  return 0;
}

export async function inspectCertificate(context: CommandContext): Promise<number> {
  const file = required(context.args, 0, '<file.pem>');
  const chain = readCertificateChain(readFileSync(file));
  chain.forEach((info, index) => {
    if (index > 0) context.out('');
    context.out(`${index === 0 ? 'certificate' : `chain[${index}]`}: ${file}`);
    const rows: [string, string][] = [
      ['subject', info.subject],
      ['issuer', info.issuer],
      ['organizationIdentifier', info.organizationIdentifier ?? '(none)'],
      ['PSD2 roles', info.roles.length ? info.roles.join(', ') : '(none)'],
      [
        'competent authority',
        info.competentAuthority
          ? `${info.competentAuthority.name} (${info.competentAuthority.id})`
          : '(none)',
      ],
      [
        'QC statements',
        [info.qcCompliance ? 'QcCompliance' : '', ...info.qcTypes.map((t) => `QcType ${t}`)]
          .filter(Boolean)
          .join(', ') || '(none)',
      ],
      ['valid from', info.validFrom.toISOString()],
      [
        'valid to',
        `${info.validTo.toISOString()} (${info.daysToExpiry >= 0 ? `${info.daysToExpiry} days left` : `expired ${-info.daysToExpiry} days ago`})`,
      ],
      ['serial', info.serialNumber],
      ['SHA-256', info.fingerprintSha256],
    ];
    const width = Math.max(...rows.map(([label]) => label.length));
    for (const [label, value] of rows) context.out(`  ${label.padEnd(width)}  ${value}`);
  });
  return 0;
}
