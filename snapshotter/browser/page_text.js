// The page's text as a reader sees it: Chromium's innerText (its block structure: paragraph
// breaks, list items, table cells by tabs), less the text nodes a reader cannot see, plus
// the text innerText never reads though it is on screen (CSS ::before/::after strings, the
// text of same-origin frames). Every decision is made on the page as laid out, before
// anything is touched; then, in one synchronous run (no script of the page and no paint can
// come in between), the unseen text nodes are emptied, the generated text and the frames'
// text put in as plain elements, innerText read, and every change undone.
//
// A text node is left out, under the first rule it meets, when
//   opacity    its element or an ancestor has opacity 0 (checkVisibility opacityProperty);
//   font-size  its computed font-size is 0;
//   size       none of its boxes (Range client rects) is at least minSide CSS px each way;
//   off-page   every box lies outside the area a reader can scroll to: left of or above the
//              page's origin (right of it in a right-to-left page), or past the viewport on an
//              axis the page does not scroll, or outside the viewport for fixed text;
//   clipped    every box is cut away (to less than minSide px) by the ancestors that clip it:
//              overflow hidden or clip, the CSS clip property (of ancestors on its containing
//              block chain, so an absolutely positioned child escapes a static parent);
//   colour     its text colour is fully transparent (and no background is clipped to the
//              text to show through it), or has exactly the red, green and blue
//              of the background behind it: the first background colour among its
//              ancestors, when that colour is opaque (or the white canvas when there is none).
//              Text with a shadow or stroke is seen. Not decided (kept) past a background
//              image, a translucent background, a background clipped to the text, a colour
//              that is not rgb(), SVG text, or a dark colour scheme's canvas.
// Text that display:none, visibility:hidden or content-visibility:hidden hide is not in
// innerText to begin with and is not counted. Text under an element fixed over the whole
// viewport (a cookie wall) is kept and counted as covered. Sections that
// content-visibility:auto skips while away from the viewport are read (innerText alone would
// skip them). Text in shadow trees, which innerText does not read, is counted, not read; a
// partly visible text node is kept whole.
(options) => {
  const minSide = options.minSide;
  const maxFrameDepth = options.maxFrameDepth;
  const maxExcerpts = options.maxExcerpts;
  const excerptLength = options.excerptLength;
  // By local name (lower case in HTML and XHTML alike).
  const SKIP = new Set(["script", "style", "template", "noscript", "textarea", "select",
    "option", "optgroup", "datalist", "title"]);
  const NO_CHILDREN = new Set(["img", "input", "br", "hr", "wbr", "area", "base", "col",
    "embed", "link", "meta", "source", "track", "iframe", "frame", "object", "video", "audio",
    "canvas", "select", "textarea"]);
  const SVG = "http://www.w3.org/2000/svg";
  const MAX_FRAMES_LISTED = 50;
  const MAX_URL = 300;
  const PRIVATE_USE = /[\uE000-\uF8FF]|[\uDB80-\uDBFF][\uDC00-\uDFFF]/g;
  const report = {
    leftOut: {},
    generated: { characters: 0, elements: 0 },
    frames: { read: 0, notRead: [], notReadCount: 0 },
    covered: { characters: 0, by: null },
    colourUndecided: { characters: 0 },
    shadowNotRead: { characters: 0 },
  };

  const collapse = (text) => text.replace(/\s+/g, " ").trim();

  const leaveOut = (rule, text) => {
    const words = collapse(text);
    const entry = report.leftOut[rule] || (report.leftOut[rule] = { characters: 0, excerpts: [] });
    entry.characters += words.length;
    if (entry.excerpts.length < maxExcerpts) {
      entry.excerpts.push(Array.from(words).slice(0, excerptLength).join("").toWellFormed());
    }
  };

  // --- colours -----------------------------------------------------------------------------

  const parseColour = (value) => {
    const match = /^rgba?\(([^)]+)\)$/.exec(value || "");
    if (!match) {
      return null;
    }
    const parts = match[1].split(/[\s,/]+/).filter(Boolean).map(Number);
    if (parts.length < 3 || parts.some((part) => Number.isNaN(part))) {
      return null;
    }
    return { r: parts[0], g: parts[1], b: parts[2], a: parts.length > 3 ? parts[3] : 1 };
  };

  // The opaque colour behind `element`, or null when it cannot be told exactly: the first
  // background colour among it and its ancestors (a frame's canvas is transparent, so its
  // frame element's page goes on), the white canvas past the root unless it is dark.
  const backgrounds = new Map();
  const backgroundBehind = (element) => {
    if (backgrounds.has(element)) {
      return backgrounds.get(element);
    }
    const style = info(element).style;
    let found = null;
    const colour = parseColour(style.backgroundColor);
    const painted =
      style.backgroundImage !== "none" ||
      style.backgroundClip === "text" ||
      style.webkitBackgroundClip === "text";
    if (painted || colour === null) {
      found = null;
    } else if (colour.a > 0) {
      found = colour.a === 1 ? colour : null;
    } else if (element.parentElement) {
      found = backgroundBehind(element.parentElement);
    } else if (element.ownerDocument.defaultView.frameElement) {
      found = backgroundBehind(element.ownerDocument.defaultView.frameElement);
    } else {
      found = (style.colorScheme || "").includes("dark") ? null : { r: 255, g: 255, b: 255, a: 1 };
    }
    backgrounds.set(element, found);
    return found;
  };

  // Whether a background is painted through the text's glyphs (background-clip: text on the
  // pseudo-element or on the element or an ancestor): transparent text that shows it.
  const clipsText = (style) =>
    style.backgroundClip === "text" || style.webkitBackgroundClip === "text";
  const throughText = new Map();
  const paintsThroughText = (element, style, pseudo) => {
    if (pseudo && clipsText(style)) {
      return true;
    }
    if (!throughText.has(element)) {
      const parent = element.parentElement;
      throughText.set(
        element,
        clipsText(info(element).style) || (parent ? paintsThroughText(parent, null, false) : false),
      );
    }
    return throughText.get(element);
  };

  // "colour" when the text cannot be told from what is behind it, "undecided" when that
  // cannot be told exactly, else null. `style` is the text's (the element's or its pseudo-
  // element's); a pseudo-element's own background, if it paints one, is what is behind it.
  const colourRule = (element, style, pseudo) => {
    if (element.namespaceURI === SVG) {
      return "undecided";
    }
    if (style.textShadow !== "none" || parseFloat(style.webkitTextStrokeWidth) > 0) {
      return null;
    }
    const fill = parseColour(style.webkitTextFillColor || style.color);
    if (fill === null) {
      return "undecided";
    }
    if (fill.a === 0) {
      return paintsThroughText(element, style, pseudo) ? null : "colour";
    }
    let behind;
    const own = pseudo ? parseColour(style.backgroundColor) : null;
    if (pseudo && (style.backgroundImage !== "none" || own === null || own.a > 0)) {
      behind = own !== null && own.a === 1 && style.backgroundImage === "none" ? own : null;
    } else {
      behind = backgroundBehind(element);
    }
    if (behind === null) {
      return "undecided";
    }
    return fill.r === behind.r && fill.g === behind.g && fill.b === behind.b ? "colour" : null;
  };

  // --- geometry ----------------------------------------------------------------------------

  // What an element's computed style says about how it places and clips its content, read
  // once and only as far as needed (a page has tens of thousands of elements).
  const clipsOverflow = (value) => value === "hidden" || value === "clip";
  // overflow does not apply to these (an inline span with overflow:hidden clips nothing)
  const NO_OVERFLOW =
    /^(inline|contents|table-(row|row-group|header-group|footer-group|column|column-group))$/;
  class About {
    constructor(element) {
      const style = element.ownerDocument.defaultView.getComputedStyle(element);
      this.style = style;
      this.position = style.position;
      const overflows = !NO_OVERFLOW.test(style.display);
      this.clipX = overflows && clipsOverflow(style.overflowX);
      this.clipY = overflows && clipsOverflow(style.overflowY);
      const positioned = this.position === "absolute" || this.position === "fixed";
      this.clipRect = positioned ? style.clip : "auto";
    }

    // A transformed, filtered or contained element is the containing block of fixed content.
    get containsFixed() {
      if (this.contains === undefined) {
        const style = this.style;
        this.contains =
          style.transform !== "none" || style.perspective !== "none" || style.filter !== "none" ||
          /paint|layout|strict|content/.test(style.contain || "") ||
          /transform|perspective|filter/.test(style.willChange || "");
      }
      return this.contains;
    }

    get containsAbsolute() {
      return this.position !== "static" || this.containsFixed;
    }
  }
  const infos = new Map();
  const info = (element) => {
    let found = infos.get(element);
    if (!found) {
      found = new About(element);
      infos.set(element, found);
    }
    return found;
  };

  const docRect = (rect, win) => ({
    left: rect.left + win.scrollX,
    top: rect.top + win.scrollY,
    right: rect.right + win.scrollX,
    bottom: rect.bottom + win.scrollY,
  });

  const intersect = (a, b) => ({
    left: Math.max(a.left, b.left),
    top: Math.max(a.top, b.top),
    right: Math.min(a.right, b.right),
    bottom: Math.min(a.bottom, b.bottom),
  });

  const bigEnough = (rect) =>
    rect.right - rect.left >= minSide && rect.bottom - rect.top >= minSide;

  const UNBOUNDED = { left: -Infinity, top: -Infinity, right: Infinity, bottom: Infinity };

  // The area (page coordinates) that `node` itself leaves visible of what it clips: its
  // padding box on an axis where its overflow is hidden or clip, and its CSS clip rect. The
  // root and body pass theirs to the viewport (pageAreaOf).
  const ownClip = (node) => {
    const about = info(node);
    const doc = node.ownerDocument;
    let area = UNBOUNDED;
    if (node === doc.documentElement || node === doc.body) {
      return area;
    }
    const win = doc.defaultView;
    if (about.clipX || about.clipY) {
      const box = node.getBoundingClientRect();
      const padding = docRect(
        {
          left: box.left + node.clientLeft,
          top: box.top + node.clientTop,
          right: box.left + node.clientLeft + node.clientWidth,
          bottom: box.top + node.clientTop + node.clientHeight,
        },
        win,
      );
      area = {
        left: about.clipX ? padding.left : -Infinity,
        right: about.clipX ? padding.right : Infinity,
        top: about.clipY ? padding.top : -Infinity,
        bottom: about.clipY ? padding.bottom : Infinity,
      };
    }
    const clipped = /^rect\(([^)]*)\)$/.exec(about.clipRect || "auto");
    if (clipped) {
      const box = docRect(node.getBoundingClientRect(), win);
      const [top, right, bottom, left] = clipped[1].split(/[\s,]+/).map((side) => parseFloat(side));
      area = intersect(area, {
        top: Number.isNaN(top) ? -Infinity : box.top + top,
        right: Number.isNaN(right) ? Infinity : box.left + right,
        bottom: Number.isNaN(bottom) ? Infinity : box.top + bottom,
        left: Number.isNaN(left) ? -Infinity : box.left + left,
      });
    }
    return area;
  };

  // The area (page coordinates) the ancestors that clip content at `node` leave visible, and
  // whether that content is fixed to the viewport. `escaping` is how the content is
  // positioned: "absolute" content skips ancestors up to the first positioned one (its
  // containing block), "fixed" content all but a transformed (or filtered, contained) one;
  // only the ancestors on that chain clip it.
  const chains = { none: new Map(), absolute: new Map(), fixed: new Map() };
  const clipChain = (node, escaping) => {
    if (!node) {
      return { area: UNBOUNDED, fixed: escaping === "fixed" };
    }
    const memo = chains[escaping || "none"];
    if (memo.has(node)) {
      return memo.get(node);
    }
    const about = info(node);
    let found;
    if (
      (escaping === "absolute" && !about.containsAbsolute) ||
      (escaping === "fixed" && !about.containsFixed)
    ) {
      found = clipChain(node.parentElement, escaping);
    } else {
      const next =
        about.position === "fixed" ? "fixed" : about.position === "absolute" ? "absolute" : null;
      const above = clipChain(node.parentElement, next);
      found = { area: intersect(ownClip(node), above.area), fixed: above.fixed };
    }
    memo.set(node, found);
    return found;
  };

  const clipOf = (element) => clipChain(element, null);

  // The area of the page a reader can scroll to (page coordinates), and the viewport.
  const pageAreaOf = (doc) => {
    const win = doc.defaultView;
    const root = doc.documentElement;
    const rootStyle = win.getComputedStyle(root);
    const bodyStyle = doc.body ? win.getComputedStyle(doc.body) : rootStyle;
    const overflowOf = (axis) => {
      const own = rootStyle[axis];
      return own === "visible" ? bodyStyle[axis] : own;
    };
    const viewport = {
      left: win.scrollX,
      top: win.scrollY,
      right: win.scrollX + root.clientWidth,
      bottom: win.scrollY + root.clientHeight,
    };
    const locked = (axis) => ["hidden", "clip"].includes(overflowOf(axis));
    const rtl = rootStyle.direction === "rtl";
    return {
      viewport,
      area: {
        left: locked("overflowX") ? viewport.left : rtl ? -Infinity : 0,
        right: locked("overflowX") ? viewport.right : rtl ? root.clientWidth : Infinity,
        top: locked("overflowY") ? viewport.top : 0,
        bottom: locked("overflowY") ? viewport.bottom : Infinity,
      },
    };
  };

  // "size", "off-page", "clipped" or null for boxes (client rects) of content of `element`.
  const placeRule = (rects, element, page) => {
    const win = element.ownerDocument.defaultView;
    const boxes = Array.from(rects).filter(
      (rect) => rect.width >= minSide && rect.height >= minSide,
    );
    if (boxes.length === 0) {
      return "size";
    }
    const clip = clipOf(element);
    const reachable = clip.fixed ? page.viewport : page.area;
    let onPage = false;
    for (const rect of boxes) {
      const placed = intersect(docRect(rect, win), reachable);
      if (!bigEnough(placed)) {
        continue;
      }
      onPage = true;
      if (bigEnough(intersect(placed, clip.area))) {
        return null;
      }
    }
    return onPage ? "clipped" : "off-page";
  };

  // --- elements and text nodes -------------------------------------------------------------

  // The nearest element with a box of its own (display:contents has none), for checkVisibility.
  const boxed = (element) => {
    let node = element;
    while (node && info(node).style.display === "contents") {
      node = node.parentElement;
    }
    return node;
  };

  // "unrendered" for an element whose text innerText leaves out already, "opacity", or null.
  const presences = new Map();
  const presenceRule = (element) => {
    if (presences.has(element)) {
      return presences.get(element);
    }
    let rule = null;
    const box = boxed(element);
    const seen = box && box.checkVisibility({ opacityProperty: true, visibilityProperty: true });
    if (!seen) {
      rule =
        !box || !box.checkVisibility() || info(element).style.visibility !== "visible"
          ? "unrendered"
          : "opacity";
    } else if (info(element).style.visibility !== "visible") {
      rule = "unrendered";
    }
    presences.set(element, rule);
    return rule;
  };

  // The rule an element's own text meets before its boxes are looked at, or null; the
  // elements whose colour could not be decided are remembered, to count their text.
  const verdicts = new Map();
  const undecided = new Set();
  const elementRule = (element) => {
    if (verdicts.has(element)) {
      return verdicts.get(element);
    }
    const style = info(element).style;
    let rule = presenceRule(element);
    if (rule === null && !(parseFloat(style.fontSize) > 0)) {
      rule = "font-size";
    } else if (rule === null) {
      const colour = colourRule(element, style, false);
      if (colour === "undecided") {
        undecided.add(element);
      } else {
        rule = colour;
      }
    }
    verdicts.set(element, rule);
    return rule;
  };

  const ranges = new Map();
  const textRule = (node, page) => {
    const element = node.parentElement;
    const rule = elementRule(element);
    if (rule !== null) {
      return rule;
    }
    const doc = node.ownerDocument;
    const range = ranges.get(doc) || doc.createRange();
    ranges.set(doc, range);
    range.selectNodeContents(node);
    return placeRule(range.getClientRects(), element, page);
  };

  // --- generated content (::before, ::after) -----------------------------------------------

  const unescapeCss = (body) =>
    body.replace(/\\([0-9a-fA-F]{1,6})\s?|\\([\s\S])/g, (all, hex, other) =>
      hex ? String.fromCodePoint(parseInt(hex, 16)) : other === "\n" ? "" : other,
    );

  // The strings and attr() values of a computed `content`; counters, quotes, images and the
  // alternative text after "/" are not read.
  const contentText = (content, element) => {
    let text = "";
    const token = new RegExp(
      [
        /"((?:[^"\\]|\\[\s\S])*)"/.source, // a double-quoted string
        /'((?:[^'\\]|\\[\s\S])*)'/.source, // a single-quoted string
        /attr\(\s*([^\s)]+)[^)]*\)/.source, // attr(name)
        /(\/)/.source, // the alternative text follows
        /[^\s"']+/.source, // anything else: counter(), open-quote, url(), ...
      ].join("|"),
      "g",
    );
    let match;
    while ((match = token.exec(content)) !== null) {
      if (match[4]) {
        break;
      }
      if (match[1] !== undefined || match[2] !== undefined) {
        text += unescapeCss(match[1] !== undefined ? match[1] : match[2]);
      } else if (match[3]) {
        text += element.getAttribute(match[3]) || "";
      }
    }
    return text.replace(PRIVATE_USE, "");
  };

  const BLOCKS = /^(block|flex|grid|list-item|table|flow-root)$/;
  const generated = (element, which, page) => {
    if (NO_CHILDREN.has(element.localName)) {
      return null;
    }
    const win = element.ownerDocument.defaultView;
    const style = win.getComputedStyle(element, which);
    const content = style.content;
    if (!content || content === "none" || content === "normal" || style.display === "none") {
      return null;
    }
    const text = contentText(content, element);
    if (!text.trim()) {
      return null;
    }
    if (elementRule(element) !== null || style.visibility !== "visible") {
      return null;
    }
    if (parseFloat(style.opacity) === 0 || !(parseFloat(style.fontSize) > 0)) {
      return null;
    }
    if (colourRule(element, style, true) === "colour") {
      return null;
    }
    const place = placeRule(element.getClientRects(), element, page);
    const own = clipOf(element).area;
    if (place === "off-page" || (place !== null && !bigEnough(own))) {
      return null;
    }
    const made = element.ownerDocument.createElement("snap-generated");
    const keepsLines = /^(pre|pre-wrap|pre-line|break-spaces)$/.test(style.whiteSpace);
    made.setAttribute(
      "style",
      `display:${BLOCKS.test(style.display) ? "block" : "inline"} !important;` +
        `white-space:${keepsLines ? "pre-wrap" : "normal"} !important;` +
        `text-transform:${style.textTransform} !important;visibility:visible !important`,
    );
    made.textContent = text;
    report.generated.characters += collapse(text).length;
    report.generated.elements += 1;
    return made;
  };

  // --- frames ------------------------------------------------------------------------------

  const frameText = (frame, depth, page) => {
    if (presenceRule(frame) !== null) {
      return null;
    }
    if (placeRule(frame.getClientRects(), frame, page) !== null) {
      return null;
    }
    let inner = null;
    try {
      inner = frame.contentDocument;
    } catch (error) {
      inner = null;
    }
    const notRead = (reason) => {
      report.frames.notReadCount += 1;
      if (report.frames.notRead.length < MAX_FRAMES_LISTED) {
        const url = String(frame.src || frame.getAttribute("src") || "");
        report.frames.notRead.push({ url: url.slice(0, MAX_URL).toWellFormed(), reason });
      }
      return null;
    };
    if (!inner || !inner.documentElement) {
      return notRead("cross-origin");
    }
    if (depth >= maxFrameDepth) {
      return notRead("nested too deep");
    }
    const text = readDocument(inner, depth + 1).trim();
    report.frames.read += 1;
    if (!text) {
      return null;
    }
    const made = frame.ownerDocument.createElement("snap-frame-text");
    made.setAttribute("style", "display:block !important;white-space:pre-wrap !important");
    made.textContent = text;
    return made;
  };

  // --- covering --------------------------------------------------------------------------

  // An element fixed to the viewport that is the topmost thing at every one of nine points
  // spread over it (a cookie or sign-up wall), or null.
  const overlayOf = (doc, page) => {
    const width = page.viewport.right - page.viewport.left;
    const height = page.viewport.bottom - page.viewport.top;
    let overlay = null;
    for (const fx of [0.1, 0.5, 0.9]) {
      for (const fy of [0.1, 0.5, 0.9]) {
        let node = doc.elementFromPoint(width * fx, height * fy);
        while (node && info(node).position !== "fixed") {
          node = node.parentElement;
        }
        if (!node) {
          return null;
        }
        if (overlay === null || node.contains(overlay)) {
          overlay = node;
        } else if (!overlay.contains(node)) {
          return null;
        }
      }
    }
    return overlay;
  };

  // The overlay as a reader of the record can find it: tag, then its id or classes.
  const describe = (element) => {
    let name = element.localName;
    if (element.id) {
      name += `#${element.id}`;
    } else if (element.classList.length) {
      name += `.${Array.from(element.classList).slice(0, 3).join(".")}`;
    }
    return name.slice(0, MAX_URL).toWellFormed();
  };

  // --- one document ------------------------------------------------------------------------

  // Every text node and element under `root` in document order, with whether it is inside
  // a shadow root (innerText does not read shadow trees).
  const walk = (root, visit) => {
    const stack = [[root, false]];
    while (stack.length) {
      const [node, shadowed] = stack.pop();
      if (node.nodeType === Node.TEXT_NODE) {
        visit(node, shadowed);
        continue;
      }
      if (node.nodeType === Node.ELEMENT_NODE) {
        if (SKIP.has(node.localName)) {
          continue;
        }
        visit(node, shadowed);
      }
      const children = node.childNodes;
      for (let index = children.length - 1; index >= 0; index -= 1) {
        stack.push([children[index], shadowed]);
      }
      if (node.shadowRoot) {
        stack.push([node.shadowRoot, true]);
      }
    }
  };

  function readDocument(doc, depth) {
    const top = doc.body || doc.documentElement;
    if (!top) {
      return "";
    }
    const page = pageAreaOf(doc);
    const emptied = [];
    const inserted = [];
    const kept = [];
    const unskipped = [];
    walk(top, (node, shadowed) => {
      if (node.nodeType === Node.TEXT_NODE) {
        if (!node.data.trim() || !node.parentElement) {
          return;
        }
        const rule = textRule(node, page);
        if (rule === "unrendered") {
          return;
        }
        if (rule === null && shadowed) {
          report.shadowNotRead.characters += collapse(node.data).length;
          return;
        }
        if (rule === null) {
          kept.push([node, node.data]);
          if (undecided.has(node.parentElement)) {
            report.colourUndecided.characters += collapse(node.data).length;
          }
          return;
        }
        if (!shadowed) {
          leaveOut(rule, node.data);
          emptied.push([node, node.data]);
        }
        return;
      }
      if (shadowed) {
        return;
      }
      if (info(node).style.contentVisibility === "auto") {
        unskipped.push(node);
      }
      if (node.localName === "iframe" || node.localName === "frame") {
        const made = frameText(node, depth, page);
        if (made) {
          inserted.push(["after", node, made]);
          kept.push([node, made.textContent]);
        }
        return;
      }
      for (const which of ["::before", "::after"]) {
        const made = generated(node, which, page);
        if (made) {
          inserted.push([which, node, made]);
          kept.push([node, made.textContent]);
        }
      }
    });
    if (depth === 0) {
      const overlay = overlayOf(doc, page);
      if (overlay) {
        report.covered.by = describe(overlay);
        for (const [node, text] of kept) {
          if (!overlay.contains(node)) {
            report.covered.characters += collapse(text).length;
          }
        }
      }
    }
    // content-visibility:auto sections away from the viewport are skipped by innerText,
    // though a reader scrolling there sees them: they are made visible while it reads.
    const styles = unskipped.map((node) => [node, node.getAttribute("style")]);
    try {
      for (const [node] of emptied) {
        node.data = "";
      }
      for (const [where, node, made] of inserted) {
        if (where === "::before") {
          node.insertBefore(made, node.firstChild);
        } else if (where === "::after") {
          node.appendChild(made);
        } else {
          node.after(made);
        }
      }
      for (const node of unskipped) {
        node.style.setProperty("content-visibility", "visible", "important");
      }
      return top.innerText || "";
    } finally {
      for (const [node, attribute] of styles) {
        if (attribute === null) {
          node.removeAttribute("style");
        } else {
          node.setAttribute("style", attribute);
        }
      }
      for (const [, , made] of inserted) {
        made.remove();
      }
      for (const [node, data] of emptied) {
        node.data = data;
      }
    }
  }

  // Lone surrogates (a script can write them) are no text: U+FFFD, so the text is UTF-8.
  const text = readDocument(document, 0).toWellFormed();
  return { text, report };
}
