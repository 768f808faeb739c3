"""A small Kubernetes REST client for the soak, and a pod watch that does not
miss events.

Why not kubectl: the churn makes several requests a second for half an hour;
a kubectl process each would cost more CPU than toy-scheduler on a 2-core
machine. Why not `kubectl get -w`: it ends when the API server closes the
watch (every 30-60 minutes, --min-request-timeout) and a restarted one lists
again without telling what happened in between. This watch resumes from the
last resourceVersion it saw, and lists again only on 410 Gone, which it
counts, so "every pod created" is every pod the API server had.

It talks to a private lab only: the lab's DIR holds the token, the CA and
the port (lab/README.md, "DIR").
"""
import http.client
import json
import os
import ssl
import threading
import time
import urllib.parse


class ApiError(RuntimeError):
    def __init__(self, status, body):
        super().__init__("HTTP %s: %s" % (status, body[:300]))
        self.status = status


class Client:
    """One keep-alive HTTPS connection, opened again after any error."""

    def __init__(self, lab_dir, timeout=30.0):
        with open(os.path.join(lab_dir, "port")) as f:
            self.port = int(f.read().strip())
        with open(os.path.join(lab_dir, "token")) as f:
            self.token = f.read().strip()
        self.ctx = ssl.create_default_context(cafile=os.path.join(lab_dir, "ca.crt"))
        self.timeout = timeout
        self.conn = None
        self.requests = 0

    def connect(self, timeout=None):
        return http.client.HTTPSConnection("127.0.0.1", self.port, context=self.ctx,
                                           timeout=self.timeout if timeout is None else timeout)

    def headers(self, content_type="application/json"):
        return {"Authorization": "Bearer " + self.token, "Accept": "application/json", "Content-Type": content_type}

    def request(self, method, path, body=None, content_type="application/json", ok=(200, 201, 202)):
        """The decoded JSON answer; ApiError on a status not in ok."""
        data = None if body is None else json.dumps(body).encode()
        for attempt in range(2):  # a keep-alive connection the server closed: once more on a new one
            if self.conn is None:
                self.conn = self.connect()
            try:
                self.conn.request(method, path, body=data, headers=self.headers(content_type))
                r = self.conn.getresponse()
                raw = r.read()
                break
            except (OSError, http.client.HTTPException):
                self.conn.close()
                self.conn = None
                if attempt:
                    raise
        self.requests += 1
        if r.status not in ok:
            raise ApiError(r.status, raw.decode(errors="replace"))
        return json.loads(raw) if raw else {}

    def get(self, path, **query):
        return self.request("GET", path + ("?" + urllib.parse.urlencode(query) if query else ""))

    def create(self, path, obj):
        return self.request("POST", path, obj)

    def delete(self, path, grace=None, missing_ok=True, **query):
        """Delete; a 404 is fine when missing_ok (someone else was first)."""
        if grace is not None:
            query["gracePeriodSeconds"] = grace
        q = "?" + urllib.parse.urlencode(query) if query else ""
        return self.request("DELETE", path + q, ok=(200, 202, 404) if missing_ok else (200, 202))

    def patch(self, path, patch):
        return self.request("PATCH", path, patch, content_type="application/merge-patch+json")

    def close(self):
        if self.conn:
            self.conn.close()
            self.conn = None


class PodWatch:
    """Every pod of a namespace, as a stream of (monotonic time, type, pod)
    handed to on_event from a thread of its own: a list first (each pod as
    ADDED), then a watch resumed from the last resourceVersion seen."""

    def __init__(self, client, namespace, on_event):
        self.client, self.ns, self.on_event = client, namespace, on_event
        self.relists = 0  # 410 Gone: resumed by a new list (events in between may be missed)
        self.reconnects = 0  # the server ended a watch (normal every few minutes)
        self.error = None
        self.synced = threading.Event()
        self._stop = threading.Event()
        self._conn = None
        self._thread = threading.Thread(target=self._run, name="pod-watch", daemon=True)

    def start(self):
        self._thread.start()
        if not self.synced.wait(60):
            raise RuntimeError("the pod watch did not list within 60 s: %s" % self.error)

    def stop(self):
        self._stop.set()
        conn = self._conn
        if conn is not None and conn.sock is not None:
            try:
                conn.sock.shutdown(2)  # wakes the blocked read
            except OSError:
                pass
        self._thread.join(10)

    def _run(self):
        path = "/api/v1/namespaces/%s/pods" % self.ns
        rv = None
        while not self._stop.is_set():
            try:
                if rv is None:
                    rv = self._list(path)
                    self.synced.set()
                rv = self._watch(path, rv)
                if not self._stop.is_set():
                    self.reconnects += 1
            except ApiError as e:
                if e.status == 410:
                    self.relists += 1
                    rv = None
                else:
                    self.error = str(e)
                    time.sleep(1)
            except (OSError, http.client.HTTPException, ValueError) as e:
                if self._stop.is_set():
                    return
                self.error = "%s: %s" % (type(e).__name__, e)
                self.reconnects += 1
                time.sleep(0.5)

    def _list(self, path):
        lst = self.client.get(path)
        for pod in lst["items"]:
            self.on_event(time.monotonic(), "ADDED", pod)
        return lst["metadata"]["resourceVersion"]

    def _watch(self, path, rv):
        q = urllib.parse.urlencode({"watch": "1", "resourceVersion": rv, "allowWatchBookmarks": "true"})
        self._conn = conn = self.client.connect(timeout=None)
        try:
            conn.request("GET", path + "?" + q, headers=self.client.headers())
            r = conn.getresponse()
            if r.status != 200:
                raise ApiError(r.status, r.read().decode(errors="replace"))
            for line in r:  # one JSON event per line
                if self._stop.is_set():
                    break
                ev = json.loads(line)
                typ, obj = ev["type"], ev["object"]
                if typ == "ERROR":
                    raise ApiError(obj.get("code", 500), obj.get("message", ""))
                rv = obj["metadata"]["resourceVersion"]
                if typ != "BOOKMARK":
                    self.on_event(time.monotonic(), typ, obj)
            return rv
        finally:
            conn.close()
            self._conn = None
