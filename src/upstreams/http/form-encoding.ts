/**
 * `application/x-www-form-urlencoded` with bracket notation, as the provider's card API reads it:
 * nested objects as `metadata[key]=v`, lists with numeric indices `domain_names[0]=a`.
 */
export function encodeForm(value: Record<string, unknown>): string {
  const pairs: string[] = [];
  const add = (key: string, item: unknown): void => {
    if (item === undefined || item === null) return;
    if (Array.isArray(item)) {
      item.forEach((element, index) => add(`${key}[${index}]`, element));
    } else if (typeof item === 'object' && !(item instanceof Date)) {
      for (const [child, element] of Object.entries(item as Record<string, unknown>))
        add(`${key}[${child}]`, element);
    } else {
      const text = item instanceof Date ? item.toISOString() : String(item);
      pairs.push(`${encodeURIComponent(key)}=${encodeURIComponent(text)}`);
    }
  };
  for (const [key, item] of Object.entries(value)) add(key, item);
  return pairs.join('&');
}
