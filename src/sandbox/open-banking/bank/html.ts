/** Minimal HTML building for the SCA pages: every interpolated value goes through escapeHtml. */

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ESCAPES[character] ?? character);
}

/** Markup that is already safe; only produced by the helpers here, so raw strings cannot slip in. */
export class SafeHtml {
  constructor(readonly markup: string) {}
}

/** Tagged template: interpolations are escaped unless they are SafeHtml (or lists of it). */
export function html(
  strings: TemplateStringsArray,
  ...values: readonly (string | number | SafeHtml | readonly SafeHtml[])[]
): SafeHtml {
  let markup = strings[0];
  values.forEach((value, index) => {
    markup += render(value) + strings[index + 1];
  });
  return new SafeHtml(markup);
}

function render(value: string | number | SafeHtml | readonly SafeHtml[]): string {
  if (value instanceof SafeHtml) return value.markup;
  if (Array.isArray(value)) return value.map((item: SafeHtml) => item.markup).join('');
  return escapeHtml(String(value));
}

const STYLE = `
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f3f5f8;color:#1b2430;margin:0;padding:2rem 1rem}
main{max-width:34rem;margin:0 auto;background:#fff;border-radius:8px;padding:1.5rem 2rem;box-shadow:0 1px 4px rgba(0,0,0,.12)}
.brand{font-weight:600;color:#0b5394;margin:0}
h1{font-size:1.4rem;margin:.4rem 0 1rem}
label{display:block;margin:.8rem 0 .2rem;font-weight:600}
input[type=text],input[type=password]{width:100%;box-sizing:border-box;padding:.5rem;border:1px solid #8a96a3;border-radius:4px;font-size:1rem}
fieldset{border:1px solid #c5cdd6;border-radius:4px;margin:1rem 0;padding:.5rem 1rem}
fieldset label{font-weight:400;display:flex;gap:.5rem;align-items:baseline}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.3rem 1rem}dt{font-weight:600}dd{margin:0;overflow-wrap:anywhere}
.actions{display:flex;gap:.75rem;margin-top:1.2rem}
button{padding:.55rem 1.2rem;font-size:1rem;border-radius:4px;border:1px solid #0b5394;cursor:pointer}
button.primary{background:#0b5394;color:#fff}button.secondary{background:#fff;color:#0b5394}
.error{background:#fde8e8;border:1px solid #c62828;color:#8e1c1c;padding:.6rem .8rem;border-radius:4px}
.hint{background:#eef5fc;border:1px solid #9cc3e6;padding:.6rem .8rem;border-radius:4px;font-size:.95rem}
`;

export function page(title: string, brandName: string, content: SafeHtml): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} - ${brandName}</title>
<style>${new SafeHtml(STYLE)}</style>
</head>
<body>
<main>
<p class="brand">${brandName}</p>
<h1>${title}</h1>
${content}
</main>
</body>
</html>
`.markup;
}
