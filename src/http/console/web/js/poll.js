// Repeats an async step every `ms` until stopped, never two at once (a slow broker answer delays
// the next call instead of piling calls up). now() runs it at once, or right after the one under way.
export function every(ms, step, onError) {
  let stopped = false;
  let timer = null;
  let running = false;
  let again = false;
  const run = async () => {
    timer = null;
    running = true;
    try {
      await step();
    } catch (e) {
      if (!stopped && onError) onError(e);
    }
    running = false;
    if (stopped) return;
    if (again) {
      again = false;
      run();
    } else {
      timer = setTimeout(run, ms);
    }
  };
  run();
  return {
    stop() {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
    },
    now() {
      if (stopped) return;
      if (running) {
        again = true;
      } else {
        clearTimeout(timer);
        run();
      }
    },
  };
}
