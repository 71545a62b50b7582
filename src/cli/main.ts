// `npm run cli -- <command>`: operator commands that work on the same database as the gateway. Only
// the arguments' check is loaded up front: Nest and the command's modules are imported once the
// command is known to run (src/cli/commands.ts).
import { ConfigError, loadConfig } from '../platform/config/app-config.js';
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
  // Before any decorated class of the command's code is evaluated.
  await import('reflect-metadata');
  if (!command.modules || command.needsDatabase?.(args) === false)
    return command.run({
      args,
      out: (line: string) => process.stdout.write(`${line}\n`),
      get app(): never {
        throw new Error(`${name} works without the database`);
      },
    });

  const base = loadConfig();
  const [
    imports,
    { NestFactory },
    { resolveDatabase },
    { createLogger },
    { PinoNestLogger },
    { CliModule },
  ] = await Promise.all([
    command.modules(),
    import('@nestjs/core'),
    import('../platform/database/database-url.js'),
    import('../platform/logging/logger.js'),
    import('../platform/logging/nest-logger.js'),
    import('./cli.module.js'),
  ]);
  // Standard output is the command's answer alone (one JSON document with --json): log lines go to
  // standard error, and only errors unless LOG_LEVEL asks for more; the failure is told in words below.
  const logger = createLogger(base.log.level === 'info' ? 'error' : base.log.level, process.stderr);
  const { config, embedded } = await resolveDatabase(base);
  const configured = command.configure?.(config) ?? config;
  const app = await NestFactory.createApplicationContext(
    CliModule.forRoot(configured, logger, imports),
    { logger: new PinoNestLogger(logger), abortOnError: false },
  );
  try {
    return await command.run({ args, app, out: (line) => process.stdout.write(`${line}\n`) });
  } finally {
    await app.close();
    await embedded?.stop();
  }
}

/** The failure in words: a problem's or a configuration error's message, never a driver's. */
async function failure(error: unknown): Promise<string> {
  if (error instanceof ConfigError) return error.message;
  // Loaded only on failure: a problem comes from the application, which is loaded by then.
  const { ProblemException } = await import('../platform/errors/problem.js');
  return error instanceof ProblemException ? error.message : failureInWords(error);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  async (error: unknown) => {
    if (error instanceof ArgumentError) {
      process.stderr.write(`portico: ${error.message}\nusage: npm run cli -- ${error.synopsis}\n`);
      process.exit(2);
    }
    if (error instanceof UsageError)
      process.stderr.write(`portico: ${error.message}\n\n${usage()}`);
    else process.stderr.write(`portico: ${await failure(error)}\n`);
    process.exit(1);
  },
);
