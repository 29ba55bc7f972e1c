#!/bin/sh
# Seeds the fuzz corpora from the repository's .mir files.
#   parse:   each file as it is.
#   reparse: each file behind a 3-byte edit header (start: u16 LE, delete length: u8)
#            and followed by `\0` and the text to insert (see fuzz_targets/reparse.rs),
#            with a few different edits per file.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
mkdir -p "$here/corpus/parse" "$here/corpus/reparse"
n=0
for f in "$root"/testdata/*.mir "$root"/crates/syntax/test_data/*/*.mir; do
    [ -f "$f" ] || continue
    name=$(printf '%s' "${f#"$root"/}" | tr '/' '_')
    cp "$f" "$here/corpus/parse/$name"
    size=$(wc -c <"$f")
    i=0
    # (start as a fraction of the file in 1/8ths, delete length, insert)
    for spec in "1 0 x" "3 1 1" "4 2 )" "5 0 (" "6 1 +" "7 3 _"; do
        set -- $spec
        start=$((size * $1 / 8))
        lo=$((start % 256)); hi=$(((start / 256) % 256))
        {
            printf "\\$(printf '%03o' "$lo")\\$(printf '%03o' "$hi")\\$(printf '%03o' "$2")"
            cat "$f"
            printf '\000%s' "$3"
        } >"$here/corpus/reparse/${name}.$i"
        i=$((i + 1))
    done
    n=$((n + 1))
done
echo "seeded $n files into $here/corpus/{parse,reparse}"

# The format targets (shared with the stable loop in crates/mirdsl/tests/fuzz.rs).
mkdir -p "$here/corpus/mindir" "$here/corpus/ir_import" "$here/corpus/npy" \
    "$here/corpus/safetensors" "$here/corpus/fmt_check"
shared="$root/../shared/fixtures/mindspore"
for f in "$root"/testdata/zoo/*/model.mindir "$shared"/*.mindir; do
    [ -f "$f" ] && cp "$f" "$here/corpus/mindir/$(printf '%s' "$f" | tr '/' '_')"
done
for f in "$root"/crates/ir/test_data/printers/*.ir "$shared"/ir/*.ir; do
    [ -f "$f" ] && cp "$f" "$here/corpus/ir_import/$(basename "$f")"
done
for f in "$root"/testdata/zoo/*/*.npy; do
    [ -f "$f" ] && cp "$f" "$here/corpus/npy/$(printf '%s' "${f#"$root"/}" | tr '/' '_')"
done
for f in "$root"/testdata/zoo/*/*.safetensors; do
    [ -f "$f" ] && cp "$f" "$here/corpus/safetensors/$(printf '%s' "${f#"$root"/}" | tr '/' '_')"
done
cp "$here"/corpus/parse/* "$here/corpus/fmt_check/"
# The stable loop's regression fixtures (its target names differ for two).
for t in mindir:mindir ir:ir_import npy:npy safetensors:safetensors fmt:fmt_check; do
    for f in "$root"/crates/mirdsl/tests/fuzz_regressions/"${t%%:*}"/*; do
        [ -f "$f" ] && cp "$f" "$here/corpus/${t##*:}/"
    done
done
echo "seeded $here/corpus/{mindir,ir_import,npy,safetensors,fmt_check}"
