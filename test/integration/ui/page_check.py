"""Loads /ui in headless Chromium and compares what it shows with what the
API server said (files written by page.sh). Usage:
page_check.py URL DIR SCREENSHOT.png; exit 1 naming every difference."""
import json
import os
import re
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.environ['TOYSCHED_ROOT'], 'devlib'))
from chromium import Chromium  # noqa: E402

# What the page shows, read from its DOM (docs/ui.md names the selectors).
SHOWN = '''JSON.stringify({
  nodes: Object.fromEntries([...document.querySelectorAll('[data-node]')].map(n =>
    [n.dataset.node, [...n.querySelectorAll('[data-pod]')].map(p => p.dataset.pod).sort()])),
  zones: Object.fromEntries([...document.querySelectorAll('[data-zone]')].map(z =>
    [z.dataset.zone, [...z.querySelectorAll('[data-node]')].map(n => n.dataset.node).sort()])),
  queue: Object.fromEntries(['active', 'backoff', 'unschedulable'].map(q =>
    [q, (document.getElementById('queue-' + q) || {}).textContent])),
  by: Object.fromEntries([...document.querySelectorAll('[data-pod]')].map(p => [p.dataset.pod, p.dataset.by])),
  holder: (document.getElementById('lease-holder') || {}).textContent,
  tasks: [...document.querySelectorAll('#tasks [data-task]')].map(t => t.dataset.task),
})'''


def pending_metrics(url):
    text = urllib.request.urlopen(url.replace('/ui', '/metrics'), timeout=10).read().decode()
    return {q: str(int(float(n))) for q, n in re.findall(r'^scheduler_pending_pods\{queue="(\w+)"\} (\S+)$', text, re.M)
            if q != 'gated'}


def main():
    url, tmp, shot = sys.argv[1:4]
    nodes = json.load(open(os.path.join(tmp, 'nodes.json')))['items']
    pods = json.load(open(os.path.join(tmp, 'pods.json')))['items']
    holder = open(os.path.join(tmp, 'holder.txt')).read().strip()
    want_nodes = {n['metadata']['name']: [] for n in nodes}
    want_zones = {}
    for n in nodes:
        zone = n['metadata'].get('labels', {}).get('topology.kubernetes.io/zone', '')
        want_zones.setdefault(zone, []).append(n['metadata']['name'])
    bound = 0
    for p in pods:
        node = p['spec'].get('nodeName')
        if node and p['status'].get('phase') not in ('Succeeded', 'Failed'):
            want_nodes[node].append(p['metadata']['namespace'] + '/' + p['metadata']['name'])
            bound += 1
    problems = []
    with Chromium(width=1400, height=900) as c:
        c.navigate(url)
        c.wait_for('document.body.dataset.connected === "true" && '
                   f'document.querySelectorAll("[data-pod]").length >= {bound}', timeout=60)
        # The queue may move between two reads (a pod update sends the
        # unschedulable pod to be tried again): compare a few times.
        for attempt in range(10):
            shown = json.loads(c.evaluate(SHOWN))
            metrics = pending_metrics(url)
            if shown['queue'] == metrics:
                break
            time.sleep(0.5)
        if shown['queue'] != metrics:
            problems.append(f'queue counts: page {shown["queue"]}, /metrics {metrics}')
        for name in want_nodes:
            want_nodes[name].sort()
        if shown['nodes'] != want_nodes:
            problems.append(f'nodes and their pods: page {shown["nodes"]}, API {want_nodes}')
        if {z: sorted(n) for z, n in want_zones.items()} != shown['zones']:
            problems.append(f'zones: page {shown["zones"]}, API {want_zones}')
        # Who bound each pod: the app label says whose it was.
        want_by = {'burst': 'us', 'theirs': 'other', 'before': 'unknown'}
        wrong_by = {pod: by for pod, by in shown['by'].items()
                    if pod.startswith('ui/') and by != want_by.get(pod[3:].split('-')[0])}
        if wrong_by:
            problems.append(f'who bound these pods: page {wrong_by}; want burst: us, theirs: other, before: unknown')
        if shown['holder'].strip() != holder:
            problems.append(f'lease holder: page {shown["holder"]!r}, API {holder!r}')
        if 'schedule' not in shown['tasks'] or not any(t.startswith('watch/') for t in shown['tasks']):
            problems.append(f'tasks: no scheduling loop or watch among {shown["tasks"]}')
        # A click on a pod shows why it went where it did.
        pod = next(p for p in want_nodes[next(n for n in want_nodes if want_nodes[n])] if p.startswith('ui/burst'))
        c.evaluate(f'document.querySelector(\'[data-pod="{pod}"]\').dispatchEvent('
                   'new MouseEvent("click", {bubbles: true})), true')
        c.wait_for(f'(document.getElementById("explain") || {{}}).textContent.includes("{pod}")', timeout=20)
        c.screenshot(shot)
    print(f'page: {len(want_nodes)} nodes in {len(want_zones)} zones, {bound} bound pods, queue {shown["queue"]}, '
          f'holder {holder}, {len(shown["tasks"])} tasks; explain shown for {pod}; screenshot {shot}')
    for p in problems:
        print('FAIL:', p, file=sys.stderr)
    sys.exit(1 if problems else 0)


if __name__ == '__main__':
    main()
