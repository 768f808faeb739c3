#!/usr/bin/env python3
"""./dev explain POD: why a running toy-scheduler put a pod where it did, or
why it left it pending: its /debug/explain for the pod's last attempt.

The scheduler serves it on --metrics-bind-address (plain HTTP on loopback:
start it with --metrics-bind-address=127.0.0.1:10251, the default URL here)
or on its secure port (--url https://HOST:10259 --token TOKEN; its
certificate is self-signed unless --tls-cert-file, so it is not verified).
Standard library only: it runs wherever ./dev does.
"""
import argparse
import os
import ssl
import sys
import urllib.error
import urllib.parse
import urllib.request


def main():
    ap = argparse.ArgumentParser(prog="./dev explain", description=__doc__.split("\n\n")[0])
    ap.add_argument("pod", help="NAMESPACE/NAME, or NAME in --namespace")
    ap.add_argument("-n", "--namespace", default="default", help="the pod's namespace when POD has none")
    ap.add_argument("--url", default=os.environ.get("TOYSCHED_URL", "http://127.0.0.1:10251"),
                    help="where toy-scheduler serves (default $TOYSCHED_URL or http://127.0.0.1:10251)")
    ap.add_argument("--token", default=os.environ.get("TOYSCHED_TOKEN"),
                    help="a bearer token, for the secure port (default $TOYSCHED_TOKEN)")
    ap.add_argument("--json", action="store_true", help="the JSON document, not the table")
    a = ap.parse_args()

    pod = a.pod if "/" in a.pod else a.namespace + "/" + a.pod
    query = {"pod": pod}
    if not a.json:
        query["format"] = "text"
    url = a.url.rstrip("/") + "/debug/explain?" + urllib.parse.urlencode(query, safe="/")
    req = urllib.request.Request(url)
    if a.token:
        req.add_header("Authorization", "Bearer " + a.token)
    context = ssl._create_unverified_context() if url.startswith("https:") else None
    try:
        with urllib.request.urlopen(req, timeout=10, context=context) as r:
            sys.stdout.write(r.read().decode())
            if a.json:
                sys.stdout.write("\n")
    except urllib.error.HTTPError as e:
        sys.stderr.write("explain: %s: %s %s\n" % (url, e.code, e.read().decode().strip()))
        sys.exit(1)
    except (urllib.error.URLError, OSError) as e:
        sys.stderr.write("explain: no toy-scheduler answers at %s (%s); start it with "
                         "--metrics-bind-address=127.0.0.1:10251, or say where with --url\n" % (a.url, e))
        sys.exit(1)


if __name__ == "__main__":
    main()
