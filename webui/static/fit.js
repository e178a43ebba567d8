// Words that must stay within a number of lines (a phone's own line at the top, where a child's long name would
// push the button down): drawn smaller, down to a floor, rather than in one more line. Fitted again whenever the
// words or the window change, so every text the page puts there is fitted, whoever puts it. Imports nothing.
const FLOOR_PX = 14; // smaller than this is not read across a table: one more line then
const STEP_PX = 1;

function lineHeight(style) {
  const height = parseFloat(style.lineHeight);
  return style.lineHeight.endsWith("px") ? height : height * parseFloat(style.fontSize);
}

function fit(element, lines) {
  element.style.removeProperty("font-size");
  let size = parseFloat(getComputedStyle(element).fontSize);
  // offsetHeight: the box as laid out, not as the banner's beat scales it.
  while (size > FLOOR_PX && element.offsetHeight > lines * lineHeight(getComputedStyle(element)) + 1) {
    size -= STEP_PX;
    element.style.fontSize = `${size}px`;
  }
}

export function keepWithin(element, lines) {
  const again = () => fit(element, lines);
  new MutationObserver(again).observe(element, { childList: true, characterData: true, subtree: true });
  window.addEventListener("resize", again);
}
