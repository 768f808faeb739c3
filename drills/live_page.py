"""--ui and --ui-screenshot: a drill seen in toy-scheduler's live page (/ui).

Each toy-scheduler the drill starts has its page's URL printed (and opened,
where there is a display to open it on). The drill's bursts are paced, so the
eye can follow the pods arriving: a Deployment starts at 0 replicas and grows
in PACE_STEPS steps. With --ui-screenshot PNG, a headless Chromium keeps the
first scheduler's page open from its start (the ticker records only while a
page is open) and photographs it at the end of the drill, before anything is
torn down.
"""
import os
import shutil
import subprocess
import threading
import time

from devlib.chromium import Chromium

PACE_STEPS = 20  # a burst grows in this many steps ...
PACE_INTERVAL = 0.2  # ... this many seconds apart: about 4 s in all
SHOT_SIZE = (1400, 900)


def open_in_browser(url):
    """Only where a display exists: a drill on a server must not try."""
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")) or not shutil.which("xdg-open"):
        return False
    subprocess.Popen(["xdg-open", url], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, start_new_session=True)
    return True


class LivePage:
    def __init__(self, target, progress, screenshot=None):
        self.target, self.progress, self.screenshot = target, progress, screenshot
        self.browser = None
        self.stop = threading.Event()
        target.on_close(self.stop.set)

    def show(self, toy):
        """After `toy` started: its page's URL, and the headless page for the screenshot."""
        url = "http://127.0.0.1:%d/ui" % toy.port()
        opened = open_in_browser(url)
        self.progress("live page of %s: %s%s" % (toy.name, url, " (opened)" if opened else ""))
        if self.screenshot and self.browser is None:
            self.browser = Chromium(*SHOT_SIZE)
            self.browser.start()
            self.browser.navigate(url)
            self.browser.wait_for('document.body.dataset.connected === "true"', timeout=30)
            self.target.on_close(self._shoot)

    def _shoot(self):
        try:
            time.sleep(1)  # the last delta (250 ms) and the flash settling
            self.browser.screenshot(self.screenshot)
            self.progress("screenshot of the live page: %s" % self.screenshot)
        finally:
            self.browser.close()

    def pace(self, name, replicas):
        """Grow Deployment `name` (created with 0 replicas) to `replicas` in steps, in the background."""
        step = max(1, -(-replicas // PACE_STEPS))

        def grow():
            for n in list(range(step, replicas, step)) + [replicas]:
                if self.stop.wait(PACE_INTERVAL):
                    return
                self.target.k("-n", self.target.ns, "scale", "deployment", name, "--replicas=%d" % n, check=False)

        threading.Thread(target=grow, name="pace-" + name, daemon=True).start()
        self.progress("--ui: Deployment %s grows to %d in steps of %d, %.1f s apart (timings are not measurements)"
                      % (name, replicas, step, PACE_INTERVAL))
