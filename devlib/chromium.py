#!/usr/bin/env python3
"""Drive Debian's headless Chromium over the DevTools protocol: open a page,
wait for a JavaScript condition, print an expression's value, take a screenshot.

    python3 devlib/chromium.py URL [--wait JS_EXPR] [--timeout SECS] [--eval JS_EXPR]
                               [--screenshot PNG] [--width 1400] [--height 900]

It talks to Chromium over --remote-debugging-pipe (JSON messages, each ended by
a NUL byte: Chromium reads them on its fd 3 and answers on its fd 4), so there
is no port to pick, share or leak. Exit 0 when done, 1 when the --wait condition
did not hold in time or the page failed (the screenshot is still written, to see
why), 2 when Chromium is not installed ($CHROMIUM, default /usr/bin/chromium).

As a module, step by step:

    with Chromium(width=1400, height=900) as c:
        c.navigate("http://127.0.0.1:8000/ui")
        c.wait_for("document.body.dataset.connected === 'true'", timeout=30)
        c.evaluate("document.querySelector('[data-pod]').dispatchEvent(new MouseEvent('click', {bubbles: true}))")
        c.wait_for("document.querySelector('#explain').textContent.includes('score')")
        print(c.evaluate("document.querySelector('#explain').textContent"))
        c.screenshot("/tmp/ui.png")

Standard library only.
"""
import argparse
import base64
import fcntl
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--hide-scrollbars", "--remote-debugging-pipe"]


class ChromiumMissing(Exception):
    pass


class ChromiumError(Exception):
    pass


class WaitTimeout(ChromiumError):
    pass


def _high(fd):
    """A close-on-exec copy of fd numbered 10 or above, so it cannot sit on the child's 3 or 4."""
    new = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return new


class Chromium:
    def __init__(self, width=1400, height=900, binary=None):
        self.width, self.height = width, height
        self.binary = binary or os.environ.get("CHROMIUM", "/usr/bin/chromium")
        self.proc = None
        self.tmp = None
        self.session = None
        self.errors = []  # uncaught exceptions in the page, to say why a wait failed
        self._events = []
        self._next_id = 0
        self._buf = b""

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.close()

    def start(self):
        exe = shutil.which(self.binary)
        if not exe:
            raise ChromiumMissing("chromium not found at %s (install Debian's chromium, or set $CHROMIUM)"
                                  % self.binary)
        self.tmp = tempfile.mkdtemp(prefix="toysched-chromium-")
        argv = [exe] + FLAGS + ["--user-data-dir=" + os.path.join(self.tmp, "profile"),
                                "--window-size=%d,%d" % (self.width, self.height), "about:blank"]
        to_r, to_w = os.pipe()      # we write commands; Chromium reads them on its fd 3
        from_r, from_w = os.pipe()  # Chromium writes answers on its fd 4; we read them
        to_r, to_w, from_r, from_w = (_high(fd) for fd in (to_r, to_w, from_r, from_w))
        # pass_fds keeps a descriptor's number in the child, so put the child's ends on 3 and 4 here,
        # for the time of the fork, and give back whatever this process had there.
        saved = {}
        for fd in (3, 4):
            try:
                saved[fd] = (fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10), os.get_inheritable(fd))
            except OSError:
                saved[fd] = None
        log = _high(os.open(os.path.join(self.tmp, "chromium.log"), os.O_WRONLY | os.O_CREAT, 0o600))
        try:
            os.dup2(to_r, 3)
            os.dup2(from_w, 4)
            self.proc = subprocess.Popen(argv, pass_fds=(3, 4), stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, start_new_session=True)
        finally:
            for fd in (3, 4):
                if saved[fd] is None:
                    os.close(fd)
                else:
                    os.dup2(saved[fd][0], fd, inheritable=saved[fd][1])
                    os.close(saved[fd][0])
            for fd in (to_r, from_w, log):
                os.close(fd)
        self._w, self._r = to_w, from_r

    def close(self):
        for fd in ("_w", "_r"):
            if getattr(self, fd, None) is not None:
                os.close(getattr(self, fd))
                setattr(self, fd, None)
        if self.proc is not None:
            # Chromium forks helpers (zygote, renderers) into its session: end the whole group we started.
            for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
                try:
                    os.killpg(self.proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    self.proc.wait(wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)  # helpers outliving the browser process
            except ProcessLookupError:
                pass
            self.proc = None
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None

    def log_tail(self, n=15):
        try:
            with open(os.path.join(self.tmp, "chromium.log"), errors="replace") as f:
                return "".join(f.readlines()[-n:])
        except (OSError, TypeError):
            return ""

    # The protocol: one JSON object per message, NUL-terminated both ways.
    def _read_message(self, deadline):
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ChromiumError("no answer from chromium in time")
            ready, _, _ = select.select([self._r], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._r, 1 << 20)
            if not chunk:
                raise ChromiumError("chromium closed the pipe (exited?)\n" + self.log_tail())
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method, params=None, session=True, timeout=30):
        """Send one command and return its result; events that arrive meanwhile are kept or noted."""
        self._next_id += 1
        msg = {"id": self._next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        data = json.dumps(msg).encode() + b"\0"
        while data:
            data = data[os.write(self._w, data):]
        deadline = time.monotonic() + timeout
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self._next_id:
                if "error" in m:
                    raise ChromiumError("%s: %s" % (method, m["error"].get("message", m["error"])))
                return m.get("result", {})
            self._event(m)

    def _event(self, m):
        if m.get("method") == "Runtime.exceptionThrown":
            d = m["params"]["exceptionDetails"]
            self.errors.append(d.get("exception", {}).get("description") or d.get("text", "exception"))
        elif "method" in m:
            self._events.append(m)
            del self._events[:-100]

    def _wait_event(self, method, deadline):
        while True:
            for i, m in enumerate(self._events):
                if m["method"] == method:
                    del self._events[:i + 1]
                    return m
            self._event(self._read_message(deadline))

    def navigate(self, url, timeout=30):
        """Open url in a fresh tab of the given size; return once it has loaded."""
        deadline = time.monotonic() + timeout
        if self.session is None:
            target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
            self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True},
                                     session=False)["sessionId"]
            self.send("Page.enable")
            self.send("Runtime.enable")
            self.send("Emulation.setDeviceMetricsOverride", {"width": self.width, "height": self.height,
                                                             "deviceScaleFactor": 1, "mobile": False})
        self._events.clear()
        r = self.send("Page.navigate", {"url": url}, timeout=timeout)
        if r.get("errorText"):
            raise ChromiumError("cannot open %s: %s" % (url, r["errorText"]))
        if r.get("loaderId"):  # none when only the #fragment changed: then no load event comes
            self._wait_event("Page.loadEventFired", deadline)

    def evaluate(self, expr, timeout=30):
        """expr's value in the page (promises awaited), as JSON gives it; raise if it throws."""
        r = self.send("Runtime.evaluate", {"expression": expr, "returnByValue": True, "awaitPromise": True},
                      timeout=timeout)
        if "exceptionDetails" in r:
            d = r["exceptionDetails"]
            raise ChromiumError("%s threw: %s" % (expr, d.get("exception", {}).get("description")
                                                  or d.get("text")))
        return r.get("result", {}).get("value")

    def wait_for(self, expr, timeout=60, every=0.2):
        """Poll expr until truthy (as JavaScript sees it); raise WaitTimeout naming it otherwise."""
        deadline = time.monotonic() + timeout
        last = None
        while True:
            try:
                if self.evaluate("!!(%s)" % expr, timeout=max(1, deadline - time.monotonic())):
                    return
                last = None
            except ChromiumError as e:
                last = e  # not there yet, perhaps: keep polling, but say so if it never holds
            if time.monotonic() >= deadline:
                why = "timed out after %gs waiting for: %s" % (timeout, expr)
                if last:
                    why += "\n  last error: %s" % last
                for err in self.errors[-3:]:
                    why += "\n  page error: %s" % err.splitlines()[0]
                raise WaitTimeout(why)
            time.sleep(every)

    def screenshot(self, path):
        r = self.send("Page.captureScreenshot", {"format": "png"}, timeout=60)
        with open(path, "wb") as f:
            f.write(base64.b64decode(r["data"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("url")
    ap.add_argument("--wait", metavar="JS_EXPR", help="poll every 200 ms until this is truthy")
    ap.add_argument("--timeout", type=float, default=60, metavar="SECS", help="for loading and --wait (default 60)")
    ap.add_argument("--eval", metavar="JS_EXPR", help="print its value: a string as is, anything else as JSON")
    ap.add_argument("--screenshot", metavar="PNG", help="write the viewport as a PNG, last")
    ap.add_argument("--width", type=int, default=1400)
    ap.add_argument("--height", type=int, default=900)
    a = ap.parse_args()

    status = 0
    try:
        with Chromium(a.width, a.height) as c:
            try:
                c.navigate(a.url, timeout=a.timeout)
                if a.wait:
                    c.wait_for(a.wait, timeout=a.timeout)
                if a.eval:
                    v = c.evaluate(a.eval, timeout=a.timeout)
                    print(v if isinstance(v, str) else json.dumps(v))
            except ChromiumError as e:
                print("chromium.py: %s" % e, file=sys.stderr)
                status = 1
            if a.screenshot and c.session:
                try:
                    c.screenshot(a.screenshot)
                except ChromiumError as e:
                    print("chromium.py: screenshot: %s" % e, file=sys.stderr)
                    status = 1
    except ChromiumMissing as e:
        print("chromium.py: %s" % e, file=sys.stderr)
        return 2
    except ChromiumError as e:
        print("chromium.py: %s" % e, file=sys.stderr)
        return 1
    return status


if __name__ == "__main__":
    sys.exit(main())
