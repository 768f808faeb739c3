"""The soak's verdict on made-up histories, no lab: each check it makes can
fail. A pod left pending and unexplained is lost, one deleted early is
withdrawn, a second logged bind of one pod is "bound twice", RSS growth is
measured after the warm-up only. Run by meson (suite integration)."""
import os
import sys
import unittest

ROOT = os.environ.get("TOYSCHED_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "soak"))
import ledger  # noqa: E402
import report  # noqa: E402

LOG_LINE = 'I1201 02:00:00.000000 1 scheduler.cpp:189] "Successfully bound pod to node" pod="%s" node="%s"\n'


def pod(uid, name, node=None, reason=None, kind="bare"):
    p = {"metadata": {"uid": uid, "namespace": "soak", "name": name, "labels": {"k": kind}},
         "spec": {"nodeName": node} if node else {}, "status": {}}
    if reason:
        p["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": reason}]
    return p


class LedgerTest(unittest.TestCase):
    def setUp(self):
        self.led = ledger.Ledger("k")

    def test_bound_reported_withdrawn_lost(self):
        led = self.led
        led.on_event(0, "ADDED", pod("1", "a"))
        led.on_event(1, "MODIFIED", pod("1", "a", node="n1"))
        led.on_event(0, "ADDED", pod("2", "b"))
        led.on_event(2, "MODIFIED", pod("2", "b", reason="Unschedulable"))
        led.on_event(0, "ADDED", pod("3", "c"))
        led.on_event(5, "DELETED", pod("3", "c"))  # deleted pending after 5 s: withdrawn
        led.on_event(0, "ADDED", pod("4", "d"))  # never anything: lost once LOST_AFTER has passed
        self.assertEqual(led.mark_lost(ledger.LOST_AFTER - 1), 0)
        self.assertEqual(len(led.unsettled_live()), 1)
        self.assertEqual(led.mark_lost(ledger.LOST_AFTER + 1), 1)
        c = led.counts(LOG_LINE % ("soak/a", "n1"))
        self.assertEqual((c["created"], c["bound"], c["reported_only"], c["withdrawn"]), (4, 1, 1, 1))
        self.assertEqual(c["lost"], ["soak/d"])
        self.assertEqual((c["moved"], c["logged_twice"]), ([], []))

    def test_lost_pod_deleted_later_stays_lost(self):
        self.led.on_event(0, "ADDED", pod("1", "a"))
        self.led.mark_lost(ledger.LOST_AFTER + 1)
        self.led.on_event(ledger.LOST_AFTER + 2, "DELETED", pod("1", "a"))
        c = self.led.counts("")
        self.assertEqual((c["lost"], c["withdrawn"]), (["soak/a"], 0))

    def test_pending_at_the_end_of_the_settling_is_lost_however_young(self):
        self.led.on_event(0, "ADDED", pod("1", "a"))
        self.assertEqual(self.led.mark_lost(1), 0)
        self.assertEqual(self.led.mark_lost(1, min_age=0), 1)
        self.led.on_event(2, "DELETED", pod("1", "a"))  # the tear-down
        self.assertEqual(self.led.counts("")["lost"], ["soak/a"])

    def test_late_report_is_not_lost_at_the_end_but_is_flagged(self):
        self.led.on_event(0, "ADDED", pod("1", "a"))
        self.led.mark_lost(ledger.LOST_AFTER + 1)
        self.led.on_event(ledger.LOST_AFTER + 2, "MODIFIED", pod("1", "a", reason="Unschedulable"))
        c = self.led.counts("")
        self.assertEqual((c["lost"], c["late"]), ([], ["soak/a"]))

    def test_bound_twice(self):
        led = self.led
        led.on_event(0, "ADDED", pod("1", "a"))
        led.on_event(1, "MODIFIED", pod("1", "a", node="n1"))
        # Two binds logged for one pod the API server bound once.
        c = led.counts(LOG_LINE % ("soak/a", "n1") + LOG_LINE % ("soak/a", "n2"))
        self.assertEqual(c["logged_twice"], ["soak/a"])
        # A pod of the same name created again and bound again is not twice.
        led.on_event(2, "DELETED", pod("1", "a", node="n1"))
        led.on_event(3, "ADDED", pod("2", "a"))
        led.on_event(4, "MODIFIED", pod("2", "a", node="n2"))
        self.assertEqual(led.counts(LOG_LINE % ("soak/a", "n1") + LOG_LINE % ("soak/a", "n2"))["logged_twice"], [])
        # spec.nodeName seen changing: bound twice, whatever the log says.
        led.on_event(5, "MODIFIED", pod("2", "a", node="n3"))
        self.assertEqual(led.counts("")["moved"], ["soak/a"])


def rows(rss_of_t, churn_s=100, step=1):
    out = [{"t_s": -5, "phase": "baseline", "rss_kib": 1000}]
    out += [{"t_s": t, "phase": "churn", "rss_kib": rss_of_t(t)} for t in range(0, churn_s, step)]
    return out


class RssTest(unittest.TestCase):
    def test_warm_up_growth_is_not_counted(self):
        # Grows fast during the warm-up (first 10 s of 100), flat after.
        f = report.rss_figures(rows(lambda t: 1000 + 100 * min(t, 10)), 100)
        self.assertEqual((f["start"], f["after_warmup"], f["end"]), (1000, 2000, 2000))
        self.assertAlmostEqual(f["growth_pct"], 0.0)
        self.assertAlmostEqual(f["slope_kib_per_min"], 0.0)

    def test_a_leak_after_warm_up_shows(self):
        f = report.rss_figures(rows(lambda t: 2000 + 2 * t), 100)  # 2 KiB/s
        self.assertGreater(f["growth_pct"], report.RSS_GROWTH_LIMIT)
        self.assertAlmostEqual(f["slope_kib_per_min"], 120.0)

    def test_one_peak_does_not_decide(self):
        f = report.rss_figures(rows(lambda t: 3000 if t == 95 else 2000), 100)
        self.assertAlmostEqual(f["growth_pct"], 0.0)
        self.assertEqual(f["max"], 3000)


if __name__ == "__main__":
    unittest.main(verbosity=2)
