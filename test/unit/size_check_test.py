"""devlib/size_check.py, which ./dev test runs before it builds, on made-up
files: in each language it reads, a function of 80 lines passes and one of 81
is named at its first line, whatever would hide it from a simpler count (an
operator, a signature over several lines, braces in a literal or a heredoc);
files of 601 lines are named; the tree itself passes. Run by meson (suite
unit)."""
import contextlib
import io
import os
import shutil
import sys
import tempfile
import unittest

ROOT = os.environ.get("TOYSCHED_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "devlib"))
import size_check  # noqa: E402


def body(n, line):
    """n lines of the statement line, each indented by two spaces."""
    return "".join("  %s\n" % line for _ in range(n))


def cpp_function(lines, head="int f(int a) {", stmt="a += 1;"):
    """A function of `lines` lines in all: head (maybe several lines), body, '}'."""
    return head + "\n" + body(lines - head.count("\n") - 2, stmt) + "}\n"


class Tree:
    """A scratch tree laid out as the repository is."""

    def __init__(self):
        self.root = tempfile.mkdtemp()

    def write(self, rel, text):
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)

    def check(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = size_check.main(self.root)
        return rc, out.getvalue().splitlines()


class SizeCheckTest(unittest.TestCase):
    def setUp(self):
        self.tree = Tree()
        self.addCleanup(shutil.rmtree, self.tree.root)

    def assertFlags(self, rel, text, expected):
        """Only rel in the tree: the checker reports exactly `expected`."""
        self.tree.write(rel, text)
        rc, out = self.tree.check()
        self.assertEqual(out, expected)
        self.assertEqual(rc, 1 if expected else 0)
        os.remove(os.path.join(self.tree.root, rel))

    def test_cpp_80_lines_pass_81_fail(self):
        src = "namespace x {\n" + cpp_function(80) + "}  // namespace x\n"
        self.assertFlags("src/x/ok.cpp", src, [])
        src = "namespace x {\n" + cpp_function(81) + "}  // namespace x\n"
        self.assertFlags("src/x/long.cpp", src, ["src/x/long.cpp:2: a function of 81 lines (at most 80)"])

    def test_cpp_operators_count(self):
        src = "struct A {\n" + cpp_function(81, "  bool operator==(const A& o) const {", "(void)o;") + "};\n"
        self.assertFlags("include/x/a.hpp", src, ["include/x/a.hpp:2: a function of 81 lines (at most 80)"])
        src = cpp_function(81, "A& A::operator=(const A& o) {", "(void)o;")
        self.assertFlags("src/a.cpp", src, ["src/a.cpp:1: a function of 81 lines (at most 80)"])

    def test_cpp_counts_from_the_template_line_over_a_long_signature(self):
        head = "template <class T = int>\nT f(T a,\n      std::vector<int> v = {},\n      int c = 0) {"
        self.assertFlags("bench/t.cpp", cpp_function(81, head), ["bench/t.cpp:1: a function of 81 lines (at most 80)"])

    def test_cpp_constructor_initialisers_in_braces(self):
        head = "A::A(int a)\n    : a_{a}, b_(a), c_{} {"
        self.assertFlags("src/a.cpp", cpp_function(81, head), ["src/a.cpp:1: a function of 81 lines (at most 80)"])

    def test_cpp_braces_in_literals_and_comments_do_not_count(self):
        head = 'TEST_CASE("a } in a name") {\n  auto j = R"x({"a": {}}\n}\n)x";  // }\n  /* } */ char c = \'}\';'
        self.assertFlags("test/unit/t.cpp", cpp_function(81, head, "j += \"}\";"),
                         ["test/unit/t.cpp:1: a function of 81 lines (at most 80)"])

    def test_cpp_a_lambda_at_namespace_level_is_a_function(self):
        src = cpp_function(81, "const auto f = [](int a) {", "a += 1;")[:-1] + ";\n"
        self.assertFlags("src/f.cpp", src, ["src/f.cpp:1: a function of 81 lines (at most 80)"])

    def test_cpp_tables_and_classes_are_not_functions(self):
        table = "constexpr int kTable[] = {\n" + body(200, "1,") + "};\n"
        klass = "class C {\n public:\n" + "".join("  int m%d() const { return %d; }\n" % (i, i) for i in range(150))
        self.assertFlags("src/t.cpp", table + "namespace {\n" + klass + "};\n}  // namespace\n", [])

    def test_python_def_counts_from_its_decorator_nested_defs_count_towards_it(self):
        inner = "    def g():\n" + "".join("        x = 1\n" for _ in range(77))
        src = "import functools\n\n\n@functools.cache\ndef f():\n" + inner + "    return g\n"
        self.assertFlags("drills/d.py", src, ["drills/d.py:4: a function of 81 lines (at most 80)"])
        src = "class C:\n" + "".join("    def m%d(self):\n        return %d\n\n" % (i, i) for i in range(60))
        self.assertFlags("soak/c.py", src, [])

    def test_python_that_does_not_parse_is_named(self):
        self.assertFlags("bench/b.py", "def f(:\n    pass\n",
                         ["bench/b.py:1: not parsed as Python (invalid syntax)"])

    def test_go_raw_strings_and_methods(self):
        src = "package x\n\nfunc (s *S) f() string {\n\tx := `\n}\n`\n" + "".join("\tx += \"}\"\n" for _ in range(75))
        self.assertFlags("lab/x.go", src + "\treturn x\n}\n", ["lab/x.go:3: a function of 81 lines (at most 80)"])
        src = "package x\n\nfunc f(\n\ta int,\n) int {\n" + "".join("\ta++\n" for _ in range(74)) + "\treturn a\n}\n"
        self.assertFlags("lab/e2e/y_test.go", src, [])

    def test_bash_functions_heredocs_and_dev(self):
        heredoc = "  cat <<'TXT'\n}\nTXT\n"
        src = "#!/usr/bin/env bash\nf() {\n" + heredoc + body(76, "echo x") + "}\none() { echo 1; }\n"
        self.assertFlags("dev", src, ["dev:2: a function of 81 lines (at most 80)"])
        src = "g() {\n" + heredoc + body(75, "echo x") + "}\n"
        self.assertFlags("test/integration/x/t.sh", src, [])

    def test_files_over_600_lines_in_each_language(self):
        for rel, line in (("include/x.hpp", "// x"), ("devlib/x.py", "x = 1"), ("lab/x.go", "// x"),
                          ("test/x/x.sh", "echo x"), ("dev", "echo x")):
            with self.subTest(rel=rel):
                self.assertFlags(rel, (line + "\n") * 600, [])
                self.assertFlags(rel, (line + "\n") * 601, ["%s: 601 lines (at most 600)" % rel])

    def test_only_the_covered_places_are_read(self):
        self.tree.write("build/x.cpp", cpp_function(200))
        self.tree.write("subprojects/y/y.py", "def f():\n" + body(100, "x = 1"))
        self.assertEqual(self.tree.check(), (0, []))

    def test_the_tree_passes(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = size_check.main(ROOT)
        self.assertEqual((rc, out.getvalue()), (0, ""))


if __name__ == "__main__":
    unittest.main()
