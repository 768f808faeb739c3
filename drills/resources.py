"""Kubernetes quantities and a pod's effective requests, as the API defines
them: what the over-commit checks (the drills' and the tests') count with.
Written apart from the scheduler's own C++ on purpose: a check must not
share the bugs it looks for."""
import re
from collections import defaultdict
from fractions import Fraction

_SUFFIX = {"n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": Fraction(1),
           "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9), "T": Fraction(10**12),
           "P": Fraction(10**15), "E": Fraction(10**18), "Ki": Fraction(2**10), "Mi": Fraction(2**20),
           "Gi": Fraction(2**30), "Ti": Fraction(2**40), "Pi": Fraction(2**50), "Ei": Fraction(2**60)}


def quantity(s):
    m = re.fullmatch(r"([+-]?[0-9.]+)(?:[eE]([+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)", str(s))
    if not m:
        raise ValueError("bad quantity %r" % s)
    if m.group(2):
        return Fraction(m.group(1)) * Fraction(10) ** int(m.group(2))
    return Fraction(m.group(1)) * _SUFFIX[m.group(3) or ""]


def pod_requests(spec):
    """Effective requests (the Kubernetes rule: sum of containers, max with
    each init container, plus overhead; a limit alone counts as a request)."""
    def one(c):
        res = c.get("resources", {})
        out = {k: quantity(v) for k, v in res.get("limits", {}).items()}
        out.update({k: quantity(v) for k, v in res.get("requests", {}).items()})
        return out
    total = defaultdict(Fraction)
    for c in spec.get("containers", []):
        for k, v in one(c).items():
            total[k] += v
    for c in spec.get("initContainers", []):
        for k, v in one(c).items():
            total[k] = max(total[k], v)
    for k, v in spec.get("overhead", {}).items():
        total[k] += quantity(v)
    return total
