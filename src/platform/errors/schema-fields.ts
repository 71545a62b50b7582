/** A field validated against an upstream contract schema: its problems, each below the field. */
export type SchemaFieldCheck = (value: unknown) => { path: string; message: string }[];

const fieldsByClass = new Map<object, Map<string, SchemaFieldCheck>>();

/** Records a field that `UpstreamSchemas.field` validates (the validation pipe's short way, below). */
export function registerSchemaField(
  target: object,
  property: string,
  check: SchemaFieldCheck,
): void {
  let fields = fieldsByClass.get(target);
  if (!fields) fieldsByClass.set(target, (fields = new Map()));
  fields.set(property, check);
}

/** The schema fields of a class, its ancestors' included. */
export function schemaFieldsOf(target: object): Map<string, SchemaFieldCheck> {
  const all = new Map<string, SchemaFieldCheck>();
  const chain: object[] = [];
  for (let cls: object | null = target; cls && cls !== Function.prototype;) {
    chain.unshift(cls);
    cls = Object.getPrototypeOf(cls) as object | null;
  }
  for (const cls of chain)
    for (const [name, check] of fieldsByClass.get(cls) ?? []) all.set(name, check);
  return all;
}
