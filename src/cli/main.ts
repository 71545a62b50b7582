// `npm run cli -- <command>`: operator commands that work on the same database as the gateway.
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { ConfigError, loadConfig } from '../platform/config/app-config.js';
import { resolveDatabase } from '../platform/database/database-url.js';
import { ProblemException } from '../platform/errors/problem.js';
import { createLogger } from '../platform/logging/logger.js';
import { PinoNestLogger } from '../platform/logging/nest-logger.js';
import { CliModule } from './cli.module.js';
import { COMMANDS, usage, UsageError, type CommandContext } from './commands.js';

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const command = name ? COMMANDS[name] : undefined;
  if (!command) {
    process.stderr.write(usage());
    return name && name !== 'help' && name !== '--help' ? 2 : 0;
  }
  const args = parseArgs(rest);
  if (!command.needsDatabase)
    return command.run({
      args,
      out: (line: string) => process.stdout.write(`${line}\n`),
    } as unknown as CommandContext);

  const base = loadConfig();
  const logger = createLogger(base.log.level === 'info' ? 'warn' : base.log.level);
  const { config, embedded } = await resolveDatabase(base);
  const app = await NestFactory.createApplicationContext(CliModule.forRoot(config, logger), {
    logger: new PinoNestLogger(logger),
    abortOnError: false,
  });
  try {
    return await command.run({ args, app, out: (line) => process.stdout.write(`${line}\n`) });
  } finally {
    await app.close();
    await embedded?.stop();
  }
}

export interface ParsedArgs {
  positional: string[];
  options: Record<string, string | true>;
}

function parseArgs(argv: string[]): ParsedArgs {
  const parsed: ParsedArgs = { positional: [], options: {} };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) {
      parsed.positional.push(arg);
      continue;
    }
    const [key, inline] = arg.slice(2).split(/=(.*)/s, 2);
    if (inline !== undefined) parsed.options[key] = inline;
    else if (argv[i + 1] !== undefined && !argv[i + 1].startsWith('--'))
      parsed.options[key] = argv[++i];
    else parsed.options[key] = true;
  }
  return parsed;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError)
      process.stderr.write(`portico: ${error.message}\n\n${usage()}`);
    else if (error instanceof ConfigError) process.stderr.write(`portico: ${error.message}\n`);
    else if (error instanceof ProblemException) process.stderr.write(`portico: ${error.message}\n`);
    else
      process.stderr.write(`portico: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
