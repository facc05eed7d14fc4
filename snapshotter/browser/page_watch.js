// Installed in every frame before the page's own scripts (an init script of the capture's
// browser context; snapshotter/browser/settle.py reads it). It only watches; it changes
// nothing the page does:
// - when the DOM last changed (a MutationObserver on the whole document: nodes added or
//   removed, text changed), so the capture waits for a quiet page, not just an idle network;
// - the one-shot timers the page set (setTimeout) that have not fired yet, with when they are
//   due, so a paragraph a script writes 1.5 s after load is waited for (within the budget);
// - whether the page watches scrolling (an IntersectionObserver, or a scroll or wheel
//   listener on the window, the document or its root elements), which is when scrolling the
//   page can make it load more: only then is it scrolled before its text is read.
(() => {
  const KEY = "__snapWatch";
  if (Object.prototype.hasOwnProperty.call(window, KEY)) {
    return;
  }
  const state = { lastMutation: performance.now(), timers: new Map(), watchesScroll: false };
  Object.defineProperty(window, KEY, { value: state, enumerable: false });

  const observer = new MutationObserver(() => {
    state.lastMutation = performance.now();
  });
  observer.observe(document, { childList: true, subtree: true, characterData: true });

  const nativeSetTimeout = window.setTimeout;
  const nativeClearTimeout = window.clearTimeout;
  window.setTimeout = function setTimeout(handler, delay, ...rest) {
    if (typeof handler !== "function") {
      return nativeSetTimeout.call(window, handler, delay, ...rest);
    }
    let id = 0;
    const run = function (...args) {
      state.timers.delete(id);
      return handler.apply(this, args);
    };
    id = nativeSetTimeout.call(window, run, delay, ...rest);
    state.timers.set(id, performance.now() + Math.max(Number(delay) || 0, 0));
    return id;
  };
  window.clearTimeout = function clearTimeout(id) {
    state.timers.delete(id);
    return nativeClearTimeout.call(window, id);
  };

  const nativeObserve = IntersectionObserver.prototype.observe;
  IntersectionObserver.prototype.observe = function observe(...args) {
    state.watchesScroll = true;
    return nativeObserve.apply(this, args);
  };
  const nativeListen = EventTarget.prototype.addEventListener;
  const scrollEvents = new Set(["scroll", "wheel"]);
  EventTarget.prototype.addEventListener = function addEventListener(type, ...rest) {
    if (
      scrollEvents.has(type) &&
      (this === window || this === document || this === document.documentElement ||
        this === document.body)
    ) {
      state.watchesScroll = true;
    }
    return nativeListen.call(this, type, ...rest);
  };
})();
