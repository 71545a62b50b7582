// The direction of dependencies between the folders of src/, as a lint rule: each import is resolved
// against the importing file, so `../` means the same at every depth, and `#src/…` (package.json
// "imports") against src/.
import { dirname, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const SRC = resolve(ROOT, 'src');
/** Folders of the repository that src/ never imports: the tooling and its build stay out of the product. */
const TOOLING = ['tools/', 'dist-tools/'];

/** What a folder of src/ may not import, and why. Folders are matched as prefixes of the path under src/. */
export const LAYERS = [
  {
    from: 'platform/',
    deny: [
      'access/',
      'card/',
      'open-banking/',
      'pos/',
      'webhooks/',
      'audit/',
      'upstreams/',
      'provider-ledger/',
      'health/',
      'cli/',
      'sandbox/',
    ],
    why: 'platform/ is the bottom layer: it imports no capability, tenant or upstream (register with it instead)',
  },
  {
    from: 'access/',
    deny: [
      'card/',
      'open-banking/',
      'pos/',
      'webhooks/',
      'audit/',
      'upstreams/',
      'provider-ledger/',
      'health/',
      'sandbox/',
    ],
    why: 'access/ (tenants, keys, auth) sits on platform/ only',
  },
  {
    from: 'upstreams/',
    deny: [
      'card/',
      'open-banking/',
      'pos/',
      'webhooks/',
      'audit/',
      'provider-ledger/',
      'health/',
      'sandbox/',
    ],
    why: 'upstreams/ imports no facade: a facade uses its upstream, never the other way',
  },
  {
    from: 'provider-ledger/',
    deny: [
      'card/',
      'open-banking/',
      'pos/',
      'webhooks/',
      'health/',
      'cli/',
      'sandbox/',
      'scripts/',
    ],
    why: 'the provider-resource ledger sits between the facades and the trail, the upstream seam and platform/: facades declare their kinds to it, it imports none',
  },
  {
    from: 'card/',
    deny: ['pos/', 'open-banking/'],
    why: 'sibling facades do not import each other',
  },
  {
    from: 'open-banking/',
    deny: ['card/', 'pos/'],
    why: 'sibling facades do not import each other',
  },
  {
    from: 'pos/',
    deny: ['card/', 'open-banking/'],
    why: 'sibling facades do not import each other',
  },
  {
    from: 'webhooks/',
    deny: ['card/', 'open-banking/', 'pos/', 'health/'],
    why: 'webhooks/ imports no facade: facades record their events in its outbox',
  },
  {
    from: 'audit/trail/',
    deny: ['webhooks/', 'card/', 'open-banking/', 'pos/', 'provider-ledger/'],
    why: 'the audit trail is below its listeners: they subscribe to its transitions',
  },
  {
    from: 'sandbox/',
    allowOnly: ['sandbox/', 'shared/'],
    why: 'the sandbox stands for the provider: it imports only src/shared/',
  },
  { from: 'shared/', allowOnly: ['shared/'], why: 'src/shared/ imports nothing outside itself' },
];

/** Files let off one rule, each with its reason; the list shrinks as the debt is paid. */
export const EXCEPTIONS = {};

/** Where an import specifier points, as a path under src/ (undefined: a package, or outside src/). */
export function targetUnderSrc(filename, source) {
  let target;
  if (source.startsWith('#src/')) target = resolve(SRC, source.slice('#src/'.length));
  else if (source.startsWith('.')) target = resolve(dirname(filename), source);
  else return undefined;
  const to = relative(SRC, target) + (source.endsWith('/') ? '/' : '');
  return to.startsWith('..') ? undefined : to;
}

function check(context, node) {
  const source = node.source?.value;
  if (typeof source !== 'string') return;
  const from = relative(SRC, context.filename);
  if (from.startsWith('..')) return;
  const target = source.startsWith('#src/')
    ? resolve(SRC, source.slice('#src/'.length))
    : source.startsWith('.')
      ? resolve(dirname(context.filename), source)
      : undefined;
  if (target === undefined) return;
  const inRepository = relative(ROOT, target);
  if (TOOLING.some((folder) => `${inRepository}/`.startsWith(folder)))
    context.report({
      node: node.source,
      message: `${from} → ${inRepository}: src/ holds what runs in production and the sandbox; it imports no tooling.`,
    });
  const to = targetUnderSrc(context.filename, source);
  if (to === undefined) return;
  for (const layer of LAYERS) {
    if (!from.startsWith(layer.from)) continue;
    const denied = layer.allowOnly
      ? !layer.allowOnly.some((prefix) => to.startsWith(prefix))
      : layer.deny.some((prefix) => to.startsWith(prefix));
    const excused = (EXCEPTIONS[from] ?? []).some((prefix) => to.startsWith(prefix));
    if (denied && !excused)
      context.report({ node: node.source, message: `${from} → ${to}: ${layer.why}.` });
  }
}

export const layersPlugin = {
  rules: {
    direction: {
      meta: { type: 'problem', schema: [] },
      create: (context) => ({
        ImportDeclaration: (node) => check(context, node),
        ExportNamedDeclaration: (node) => check(context, node),
        ExportAllDeclaration: (node) => check(context, node),
        ImportExpression: (node) => check(context, node),
      }),
    },
  },
};
