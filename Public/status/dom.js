// DOM helpers for the status page: elements built from attributes and children, no innerHTML.

const SVG_NS = "http://www.w3.org/2000/svg";

function setAttributes(element, attributes) {
  for (const [key, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null || value === false) continue;
    element.setAttribute(key, value === true ? "" : String(value));
  }
}

function appendChildren(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** An HTML element. */
export function h(tag, attributes, ...children) {
  const element = document.createElement(tag);
  setAttributes(element, attributes);
  appendChildren(element, children);
  return element;
}

/** An SVG element. */
export function s(tag, attributes, ...children) {
  const element = document.createElementNS(SVG_NS, tag);
  setAttributes(element, attributes);
  appendChildren(element, children);
  return element;
}
