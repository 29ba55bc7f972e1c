#!/usr/bin/env bash
# How many of a dump folder's .ir files `mirdsl import` accepts, and whether the
# imported text checks; the reasons the rest fail, counted.
# Usage: testdata/irdumps/measure.sh DIR [MIRDSL]
set -u
dir=$1
mirdsl=${2:-target/debug/mirdsl}
tmp=$(mktemp -d)
total=0; imported=0; checked=0
: > "$tmp/reasons"
for f in "$dir"/*.ir; do
  total=$((total + 1))
  if "$mirdsl" import "$f" -o "$tmp/x.mir" 2> "$tmp/err" > /dev/null; then
    imported=$((imported + 1))
    if "$mirdsl" check "$tmp/x.mir" > "$tmp/cerr" 2>&1; then
      checked=$((checked + 1))
    else
      echo "check: $(grep -m1 -o 'E[0-9]\{4\}[^:]*' "$tmp/cerr" | head -1)" >> "$tmp/reasons"
    fi
  else
    echo "import: $(head -1 "$tmp/err" | sed -e 's/.*: cannot import [^:]*: //' | cut -c1-110)" >> "$tmp/reasons"
  fi
done
echo "$dir: $total files, $imported import, $checked import and check"
sort "$tmp/reasons" | uniq -c | sort -rn | head -${TOP:-15}
rm -rf "$tmp"
