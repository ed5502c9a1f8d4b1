"""Several cells of a grid side by side (--jobs), each on a topology of
its own: build them a few at a time, then run one function on all of
them at once."""
import concurrent.futures
import threading

from . import meta


def build(make, items, close, width=4):
    """[make(item) for item in ITEMS], WIDTH at a time (netem-topo is
    seconds of ip/tc commands under TCG), in ITEMS' order.  If any make()
    fails, the ones that were built are closed with CLOSE and the first
    failure is raised once every builder has finished."""
    with concurrent.futures.ThreadPoolExecutor(width) as pool:
        futs = [pool.submit(make, x) for x in items]
        concurrent.futures.wait(futs)
    built = [f.result() for f in futs if not f.exception()]
    for f in futs:
        if f.exception():
            for b in built:
                close(b)
            raise f.exception()
    return built


def close_all(close, items, width=4):
    """CLOSE every item of ITEMS, WIDTH at a time."""
    with concurrent.futures.ThreadPoolExecutor(width) as pool:
        list(pool.map(close, items))


def side_by_side(fn, items):
    """fn(i, item) for every item at once, one thread each.  Returns their
    results in ITEMS' order and the VM's CPU load over the whole (busy
    fraction, 3 decimals); an exception in any fn (a bug) is re-raised
    once all have finished."""
    cpu0 = meta.cpu_jiffies()
    out = [None] * len(items)

    def one(i, x):
        try:
            out[i] = fn(i, x)
        except BaseException as e:  # re-raised below, not lost
            out[i] = e

    threads = [threading.Thread(target=one, args=(i, x), daemon=True)
               for i, x in enumerate(items)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for r in out:
        if isinstance(r, BaseException):
            raise r
    return out, round(meta.cpu_busy_since(cpu0), 3)


class Background(threading.Thread):
    """FN(*ARGS) in a thread of its own, started at once; result() waits
    for it and returns its value or raises its exception."""

    def __init__(self, fn, *args):
        super().__init__(daemon=True)
        self.fn, self.args = fn, args
        self.value = self.error = None
        self.start()

    def run(self):
        try:
            self.value = self.fn(*self.args)
        except BaseException as e:  # re-raised by result()
            self.error = e

    def result(self, timeout=None):
        self.join(timeout)
        if self.is_alive():
            raise TimeoutError("%s still running after %s s" % (
                getattr(self.fn, "__name__", self.fn), timeout))
        if self.error is not None:
            raise self.error
        return self.value
