// `npm run cli -- <command>`: operator commands that work on the same database as the gateway.
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { ConfigError, loadConfig } from '../platform/config/app-config.js';
import { resolveDatabase } from '../platform/database/database-url.js';
import { ProblemException } from '../platform/errors/problem.js';
import { createLogger } from '../platform/logging/logger.js';
import { PinoNestLogger } from '../platform/logging/nest-logger.js';
import { CliModule } from './cli.module.js';
import {
  ArgumentError,
  COMMANDS,
  failureInWords,
  parseCommandArgs,
  usage,
  UsageError,
} from './commands.js';

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const command = name ? COMMANDS[name] : undefined;
  if (!command) {
    process.stderr.write(usage());
    return name && !['help', '--help', '-h'].includes(name) ? 2 : 0;
  }
  const args = parseCommandArgs(name, command, rest);
  if (args.options.help) {
    process.stdout.write(`usage: npm run cli -- ${command.synopsis}\n      ${command.summary}\n`);
    return 0;
  }
  if (!command.needsDatabase)
    return command.run({
      args,
      out: (line: string) => process.stdout.write(`${line}\n`),
      get app(): never {
        throw new Error(`${name} works without the database`);
      },
    });

  const base = loadConfig();
  // Standard output is the command's answer alone (one JSON document with --json): log lines go to
  // standard error, and only errors unless LOG_LEVEL asks for more; the failure is told in words below.
  const logger = createLogger(base.log.level === 'info' ? 'error' : base.log.level, process.stderr);
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

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof ArgumentError) {
      process.stderr.write(`portico: ${error.message}\nusage: npm run cli -- ${error.synopsis}\n`);
      process.exit(2);
    }
    if (error instanceof UsageError)
      process.stderr.write(`portico: ${error.message}\n\n${usage()}`);
    else if (error instanceof ConfigError) process.stderr.write(`portico: ${error.message}\n`);
    else if (error instanceof ProblemException) process.stderr.write(`portico: ${error.message}\n`);
    else process.stderr.write(`portico: ${failureInWords(error)}\n`);
    process.exit(1);
  },
);
