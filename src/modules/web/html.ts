// The template helper of the browser views: `html` is a tagged template literal that escapes every interpolated
// value unless it is already `Html` (made by `html` itself, or by `trusted` for markup that has been through the
// sanitizer or comes from the service's own renderers, such as the diff markup). Arrays are joined, and
// undefined, null and false render as nothing, so conditionals and lists read naturally:
//   html`<ul>${items.map((item) => html`<li>${item.title}</li>`)}</ul>`
/** `&<>"'` as numeric references (the OAuth pages' tests read them back that way). */
export function escapeHtml(text: string): string {
  return /[&<>"']/.test(text) ? text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`) : text;
}

export class Html {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  toString(): string {
    return this.text;
  }
}

export type Renderable = Html | string | number | boolean | null | undefined | readonly Renderable[];

function render(value: Renderable): string {
  if (value === undefined || value === null || value === false || value === true) return '';
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return (value as readonly Renderable[]).map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Renderable[]): Html {
  let text = strings[0]!;
  for (let index = 0; index < values.length; index += 1) text += render(values[index]!) + strings[index + 1]!;
  return new Html(text);
}

/** Markup shown as it is: only what the sanitizer produced or the service rendered itself. */
export function trusted(markup: string): Html {
  return new Html(markup);
}
