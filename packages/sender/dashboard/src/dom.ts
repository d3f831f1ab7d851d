/** Attributes of an element; `on*` functions become listeners, `null`/`false` leave it out. */
export type Attrs = Record<string, string | number | boolean | null | undefined | ((event: Event) => void)>;
/** A child: an element, text (never parsed as HTML), or nothing. */
export type Child = Node | string | number | null | undefined | false;

const SVG_NS = 'http://www.w3.org/2000/svg';

function fill(el: Element, attrs: Attrs, children: Child[]): void {
  for (const [name, value] of Object.entries(attrs)) {
    if (typeof value === 'function') el.addEventListener(name.slice(2), value);
    else if (value !== null && value !== undefined && value !== false) el.setAttribute(name, value === true ? '' : String(value));
  }
  // Text goes in as text nodes: data from the API (receiver answers, payloads) can never become markup.
  for (const child of children)
    if (child !== null && child !== undefined && child !== false) el.append(typeof child === 'number' ? String(child) : child);
}

/** An HTML element. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  fill(el, attrs, children);
  return el;
}

/** An SVG element. */
export function s(tag: string, attrs: Attrs = {}, ...children: Child[]): SVGElement {
  const el = document.createElementNS(SVG_NS, tag) as SVGElement;
  fill(el, attrs, children);
  return el;
}

/** Replaces the children of `el`. */
export function put(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  fill(el, {}, children);
}

/** The element with this id (the page's own markup: missing means a broken build). */
export function byId<T extends HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (el === null) throw new Error(`dashboard: #${id} missing`);
  return el as T;
}

/** `2026-11-22T04:30:00.123+00:00` as local `04:30:00.123`, with the date when it is not today. */
export function shortTime(iso: string | null): string {
  if (iso === null) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const time = `${d.toLocaleTimeString([], { hour12: false })}.${String(d.getMilliseconds()).padStart(3, '0')}`;
  return d.toDateString() === new Date().toDateString() ? time : `${d.toLocaleDateString()} ${time}`;
}
