// Scroll the page to its end, one viewport at a time, so that what it loads on scrolling
// (an IntersectionObserver's lazy section, an infinite list's next part) is asked for. Each
// step waits two frames, the time the page's observers are told; at most `maxSteps` steps
// and `budget` milliseconds. The page is left where the scrolling stopped: content some
// pages show only while it is on screen (and hide again once scrolled back) is read there.
async ({ maxSteps, budget }) => {
  const watch = window.__snapWatch || null;
  const started = performance.now();
  const root = document.scrollingElement || document.documentElement;
  const frame = () =>
    new Promise((resolve) => {
      requestAnimationFrame(() => resolve());
    });
  const atEnd = () => window.scrollY >= root.scrollHeight - window.innerHeight - 1;
  let steps = 0;
  while (steps < maxSteps && performance.now() - started < budget && !atEnd()) {
    const bottom = root.scrollHeight - window.innerHeight;
    const top = Math.min(window.scrollY + window.innerHeight, bottom);
    window.scrollTo({ top, left: window.scrollX, behavior: "instant" });
    steps += 1;
    await frame();
    await frame();
  }
  if (watch) {
    watch.scrolled = true;
  }
  return {
    steps,
    reachedEnd: atEnd(),
    height: root.scrollHeight,
    milliseconds: Math.round(performance.now() - started),
  };
}
