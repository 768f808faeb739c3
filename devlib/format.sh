# The house format, checked (by ./dev test, before it builds) and fixed (by
# ./dev format). Source it; it defines functions only.
#
#   format_check ROOT   prints every file that is not in the house format and
#                       returns 1; returns 0 when all are
#   format_fix ROOT     rewrites the files into it (what a tool can fix)
#
# The files are the ones git has or would add under ROOT (tracked, or
# untracked and not ignored): what is about to be committed is checked,
# build trees and caches are not.
#
#   C++ (*.cpp *.hpp *.h *.cc)  clang-format-14, ROOT/.clang-format
#   Go (lab/**.go)              gofmt
#   Python (*.py)               flake8, ROOT/.flake8; fixed with autopep8 (the
#                               layout; what it cannot fix, such as an unused
#                               import, is left to a person)
#
# Versions are pinned (./dev setup): another clang-format formats differently.

CLANG_FORMAT=clang-format-14

# format_files ROOT PATHSPEC...: the files, one per line, relative to ROOT.
format_files() {
  local root=$1; shift
  git -C "$root" ls-files --cached --others --exclude-standard -- "$@" | sort -u |
    while IFS= read -r f; do [ -f "$root/$f" ] && printf '%s\n' "$f"; done
}

# format_tools: fail, saying what to do, when a tool is missing: a check
# that is skipped for want of a tool would pass what it cannot see.
format_tools() {
  local t missing=()
  for t in "$CLANG_FORMAT" gofmt flake8 "$@"; do command -v "$t" >/dev/null || missing+=("$t"); done
  ((${#missing[@]} == 0)) && return 0
  echo "format: not installed: ${missing[*]} (./dev setup installs them; gofmt comes with Go)" >&2
  return 1
}

format_check() {
  local root=$1 bad=0 out rc files=()
  format_tools || return 1
  mapfile -t files < <(format_files "$root" '*.cpp' '*.hpp' '*.h' '*.cc')
  if ((${#files[@]})); then
    # One run for all the files (a run per file costs seconds); the names come
    # from its diagnostics, and any other failure is shown as it is.
    rc=0
    out=$(cd "$root" && "$CLANG_FORMAT" --dry-run --Werror --ferror-limit=1 "${files[@]}" 2>&1) || rc=$?
    if ((rc)); then
      bad=1
      local named
      named=$(sed -nE 's/^(.+):[0-9]+:[0-9]+: error: code should be clang-formatted.*/\1/p' <<<"$out" | sort -u)
      if [ -n "$named" ]; then
        echo "C++ files $CLANG_FORMAT would change:"
        sed 's/^/  /' <<<"$named"
      else
        echo "$CLANG_FORMAT failed:"
        sed 's/^/  /' <<<"$out"
      fi
    fi
  fi
  mapfile -t files < <(format_files "$root" 'lab/*.go')
  if ((${#files[@]})); then
    rc=0
    out=$(cd "$root" && gofmt -l "${files[@]}" 2>&1) || rc=$?
    if ((rc)) || [ -n "$out" ]; then
      bad=1
      echo "Go files gofmt would change:"
      sed 's/^/  /' <<<"$out"
    fi
  fi
  mapfile -t files < <(format_files "$root" '*.py')
  if ((${#files[@]})); then
    rc=0
    out=$(cd "$root" && flake8 --config .flake8 "${files[@]}" 2>&1) || rc=$?
    if ((rc)); then
      bad=1
      echo "Python files flake8 finds fault with:"
      sed 's/^/  /' <<<"$out"
    fi
  fi
  if ((bad)); then
    echo "./dev format fixes them (flake8 findings autopep8 cannot fix, such as an unused import, need a hand)"
    return 1
  fi
}

format_fix() {
  local root=$1 files=()
  format_tools autopep8 || return 1
  mapfile -t files < <(format_files "$root" '*.cpp' '*.hpp' '*.h' '*.cc')
  ((${#files[@]} == 0)) || (cd "$root" && "$CLANG_FORMAT" -i "${files[@]}")
  mapfile -t files < <(format_files "$root" 'lab/*.go')
  ((${#files[@]} == 0)) || (cd "$root" && gofmt -w "${files[@]}")
  mapfile -t files < <(format_files "$root" '*.py')
  # autopep8 reads ROOT/.flake8 (the line length). Its defaults are left out,
  # and E402 is not fixed: it would hoist an import above the sys.path line
  # that import needs.
  ((${#files[@]} == 0)) || (cd "$root" && autopep8 --in-place --ignore=E226,E24,W50,W690,E402 "${files[@]}")
}
