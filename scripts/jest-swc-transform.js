// Jest's transform for the tests and the sources they import: TypeScript to JavaScript with SWC, file by
// file, with the build's options (scripts/build.js). Type-checking is `npm run typecheck`, not the tests'.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { transformSync } from '@swc/core';
import { SWC_OPTIONS } from './build.js';

const VERSION = JSON.parse(
  readFileSync(new URL('../node_modules/@swc/core/package.json', import.meta.url), 'utf8'),
).version;

const transformer = {
  process(source, path, options) {
    const esm = options.supportsStaticESM;
    const { code, map } = transformSync(source, {
      ...SWC_OPTIONS,
      module: esm ? SWC_OPTIONS.module : { type: 'commonjs', strict: true },
      filename: path,
      sourceMaps: true,
    });
    return { code, map };
  },
  getCacheKey(source, path, options) {
    return createHash('sha256')
      .update(VERSION)
      .update('\0')
      .update(String(options.supportsStaticESM))
      .update('\0')
      .update(path)
      .update('\0')
      .update(source)
      .digest('hex');
  },
};

export default transformer;
