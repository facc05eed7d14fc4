// What keeps the page from being quiet, read from every frame's watch (page_watch.js) that
// this frame can reach: how long since the DOM last changed, how many timers the page set
// are due within the next `horizon` milliseconds (and how many later: not waited for), how
// many CSS animations and transitions that end (not the endless ones) will end within it,
// and whether the page watches scrolling.
(horizon) => {
  const found = {
    sinceMutation: Infinity,
    timers: 0,
    laterTimers: 0,
    animations: 0,
    watchesScroll: false,
  };
  const visit = (win, depth) => {
    let watch = null;
    try {
      watch = win.__snapWatch || null;
    } catch (error) {
      return; // a frame of another origin: its text is not read either
    }
    const now = win.performance.now();
    if (watch) {
      found.sinceMutation = Math.min(found.sinceMutation, now - watch.lastMutation);
      for (const due of watch.timers.values()) {
        if (due - now <= horizon) {
          found.timers += 1;
        } else {
          found.laterTimers += 1;
        }
      }
      found.watchesScroll = found.watchesScroll || watch.watchesScroll;
    }
    for (const animation of win.document.getAnimations()) {
      const timing = animation.effect ? animation.effect.getComputedTiming() : null;
      if (animation.playState !== "running" || !timing || !Number.isFinite(timing.endTime)) {
        continue;
      }
      const rate = Math.abs(animation.playbackRate || 1);
      const left = (timing.endTime - (timing.localTime || 0)) / rate;
      if (left <= horizon) {
        found.animations += 1;
      }
    }
    if (depth < 8) {
      for (let index = 0; index < win.frames.length; index += 1) {
        visit(win.frames[index], depth + 1);
      }
    }
  };
  visit(window, 0);
  if (!Number.isFinite(found.sinceMutation)) {
    found.sinceMutation = 1e9;
  }
  return found;
}
