// A secret or link shown once: in a box with a copy button, never as plain text in a status line.
import { copyButton, el } from './core.js';

/** A figure with `label`, a Copy button and `value` (wrapped, so nothing is cut off); `note` under it. */
export function secretBox(label, value, note) {
  const figure = el('figure', undefined, 'code secret');
  const caption = el('figcaption');
  caption.append(el('span', label), copyButton(value));
  const pre = el('pre');
  pre.append(el('code', value));
  figure.append(caption, pre);
  if (note) figure.append(el('p', note, 'note'));
  return figure;
}
