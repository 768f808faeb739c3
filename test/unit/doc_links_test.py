"""devlib/doc_links.py on made-up pages: each kind of broken link it must
report, and the links it must let pass (GitHub's anchors, code it must not
read as links). Run by meson (suite unit); doc-links runs it on the tree."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "devlib"))
import doc_links  # noqa: E402

GUIDE = """# A guide

## Build times on this machine (2 cores)

## `./dev e2e --focus`

## The *live* page: `/ui`

## Repeated

## Repeated

```
# not a heading: inside a fence
[not a link](missing.md)
```

Text with `[a code span](missing.md)` in it.
"""


class SlugTest(unittest.TestCase):
    def test_github_anchors(self):
        self.assertEqual(doc_links.slug("Build times on this machine (2 cores)"), "build-times-on-this-machine-2-cores")
        self.assertEqual(doc_links.slug("`./dev e2e --focus`"), "dev-e2e---focus")
        self.assertEqual(doc_links.slug("The *live* page: `/ui`"), "the-live-page-ui")
        self.assertEqual(doc_links.slug("Leader election, and what a new leader does not know"),
                         "leader-election-and-what-a-new-leader-does-not-know")
        self.assertEqual(doc_links.slug("snake_case and [a link](x.md)"), "snake_case-and-a-link")

    def test_anchors_number_duplicates_and_skip_fences(self):
        a = doc_links.anchors(GUIDE)
        self.assertIn("build-times-on-this-machine-2-cores", a)
        self.assertIn("dev-e2e---focus", a)  # a heading's code spans are part of its anchor
        self.assertIn("the-live-page-ui", a)
        self.assertIn("repeated", a)
        self.assertIn("repeated-1", a)
        self.assertNotIn("not-a-heading-inside-a-fence", a)


class CheckTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.root = self.dir.name
        os.makedirs(os.path.join(self.root, "docs"))
        self.write("docs/guide.md", GUIDE)

    def tearDown(self):
        self.dir.cleanup()

    def write(self, rel, text):
        with open(os.path.join(self.root, rel), "w") as f:
            f.write(text)

    def problems(self, text):
        self.write("README.md", text)
        return doc_links.check(self.root, ["README.md", "docs/guide.md"])

    def test_good_links_pass(self):
        self.assertEqual(self.problems(
            "[g](docs/guide.md) [t](docs/guide.md#build-times-on-this-machine-2-cores)\n"
            "[d](docs/) [r](docs/guide.md#repeated-1) [self](#top) ![img](docs/guide.md)\n"
            "[web](https://example.com/x.md#nowhere) [mail](mailto:a@b)\n\n# Top\n"), [])

    def test_each_broken_link_is_reported_with_its_line(self):
        got = self.problems("# Top\n[a](docs/nothing.md)\n[b](docs/guide.md#nowhere)\n[c](#bottom)\n"
                            "[d](../outside.md)\n[e](docs#x)\n")
        self.assertEqual([p.split(": ")[0] for p in got],
                         ["README.md:2", "README.md:3", "README.md:4", "README.md:5", "README.md:6"])
        self.assertIn("no such file", got[0])
        self.assertIn("no heading makes #nowhere", got[1])
        self.assertIn("no heading makes #bottom", got[2])
        self.assertIn("outside the repository", got[3])
        self.assertIn("an anchor on a directory", got[4])

    def test_code_is_not_read_as_links(self):
        self.assertEqual(doc_links.check(self.root, ["docs/guide.md"]), [])

    def test_main_exits_1_on_a_broken_link(self):
        self.write("README.md", "[a](docs/nothing.md)\n")
        self.assertEqual(doc_links.main([self.root]), 1)
        self.write("README.md", "[a](docs/guide.md)\n")
        self.assertEqual(doc_links.main([self.root]), 0)


if __name__ == "__main__":
    unittest.main()
