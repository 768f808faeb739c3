"""What the API server saw of a contender: its request counters before and
after a window (apiserver_request_total, apiserver_watch_events_total from
its own /metrics), and a watch of the `Scheduled` events, so the clock stops
only when every pod is bound *and* has its event (a scheduler that holds its
events back until the binds are done must not finish early for it)."""
from __future__ import annotations

import json
import re
import ssl
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

_SAMPLE = re.compile(r'^(\w+)\{([^}]*)\} (\S+)$')
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


class ApiServer:
    """The lab's kube-apiserver, read with the lab's admin token."""

    def __init__(self, lab_dir: str):
        d = Path(lab_dir)
        self.base = "https://127.0.0.1:" + (d / "port").read_text().strip()
        self.token = (d / "token").read_text().strip()
        self.ctx = ssl.create_default_context(cafile=str(d / "ca.crt"))

    def open(self, path: str, timeout: float = 30):
        req = urllib.request.Request(self.base + path, headers={"Authorization": "Bearer " + self.token})
        return urllib.request.urlopen(req, timeout=timeout, context=self.ctx)

    def counters(self) -> dict:
        """apiserver_request_total summed by verb/resource/subresource (code
        and scope folded in), and apiserver_watch_events_total by kind."""
        with self.open("/metrics") as r:
            text = r.read().decode()
        requests: dict[str, float] = {}
        watch_events: dict[str, float] = {}
        for line in text.splitlines():
            m = _SAMPLE.match(line)
            if not m or m.group(1) not in ("apiserver_request_total", "apiserver_watch_events_total"):
                continue
            labels = dict(_LABEL.findall(m.group(2)))
            if m.group(1) == "apiserver_request_total":
                key = " ".join(x for x in (labels.get("verb", ""), labels.get("resource", ""),
                                           labels.get("subresource", "")) if x)
                requests[key] = requests.get(key, 0) + float(m.group(3))
            else:
                key = labels.get("kind") or labels.get("resource", "?")
                watch_events[key] = watch_events.get(key, 0) + float(m.group(3))
        return {"requests": requests, "watch_events": watch_events}


def counter_delta(before: dict, after: dict) -> dict:
    """after − before, per series, leaving out the ones that did not move."""
    out = {}
    for family in ("requests", "watch_events"):
        b, a = before.get(family, {}), after.get(family, {})
        out[family] = {k: v - b.get(k, 0) for k, v in sorted(a.items()) if v - b.get(k, 0) > 0}
    return out


class ScheduledEvents:
    """A watch of the `Scheduled` events in one namespace: per pod name, the
    time (ns) the first one was seen. Read on a daemon thread."""

    def __init__(self, api: ApiServer, namespace: str):
        self.first: dict[str, int] = {}
        self.error: str | None = None
        self._stop = threading.Event()
        self._resp = None
        q = urllib.parse.urlencode({"watch": "1", "fieldSelector": "reason=Scheduled",
                                    "allowWatchBookmarks": "false", "timeoutSeconds": "3600"})
        self._path = f"/api/v1/namespaces/{namespace}/events?{q}"
        self._api = api
        self._opened = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()
        if not self._opened.wait(30):
            raise RuntimeError("the Scheduled-event watch did not open")

    def _read(self) -> None:
        try:
            self._resp = self._api.open(self._path, timeout=3600)
            self._opened.set()
            while not self._stop.is_set():
                line = self._resp.readline()
                if not line:
                    break
                ev = json.loads(line)
                if ev.get("type") != "ADDED":
                    continue
                name = ev["object"].get("involvedObject", {}).get("name")
                if name:
                    self.first.setdefault(name, time.time_ns())
        except Exception as e:  # reported by the caller, never a hung run
            self.error = str(e)
            self._opened.set()

    def count(self) -> int:
        return len(self.first)

    def stop(self) -> None:
        """Stop recording. The thread itself ends when the lab stops and the
        connection with it: closing the response from here would wait for
        the read it is blocked in (BufferedReader's lock)."""
        self._stop.set()
