"""Which file a `./dev e2e` run writes its report to, without running e2e:
test/e2e/RESULTS.md is the committed record of the full run, and a run of
part of the suite must leave it as it is. Run by meson (suite unit)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402  (test/e2e/run.py; importing it starts nothing)


def results(*argv):
    return run.parse(list(argv)).results


class ResultsPathTest(unittest.TestCase):
    def test_the_full_run_writes_the_record(self):
        self.assertEqual(results(), run.DEFAULT_RESULTS)
        self.assertEqual(results("--nodes", "5", "--keep", "/tmp/x"), run.DEFAULT_RESULTS)
        # The default focus spelled out is still the full run.
        self.assertEqual(results("--focus", run.DEFAULT_FOCUS), run.DEFAULT_RESULTS)

    def test_a_focused_run_leaves_the_record_alone(self):
        for argv in (["--focus", "SchedulerPredicates"], ["--focus", "NodeSelector", "--skip", ""],
                     ["--skip", "Preemption"], ["--skip", ""]):
            with self.subTest(argv=argv):
                self.assertNotEqual(results(*argv), run.DEFAULT_RESULTS)
                self.assertEqual(results(*argv), run.FOCUSED_RESULTS)
        self.assertNotEqual(run.FOCUSED_RESULTS, run.DEFAULT_RESULTS)
        # Under the build directory, which git does not track.
        self.assertEqual(os.path.dirname(os.path.dirname(run.FOCUSED_RESULTS)), run.BUILD)

    def test_smoke_and_no_results_write_nothing(self):
        self.assertIsNone(results("--smoke"))
        self.assertIsNone(results("--no-results"))
        self.assertIsNone(results("--focus", "X", "--no-results"))

    def test_an_explicit_path_wins(self):
        self.assertEqual(results("--focus", "X", "--results", "/tmp/r.md"), "/tmp/r.md")
        self.assertEqual(results("--smoke", "--results", "/tmp/r.md"), "/tmp/r.md")
        self.assertEqual(results("--results", "/tmp/r.md"), "/tmp/r.md")


if __name__ == "__main__":
    unittest.main()
