#!/usr/bin/env bash
# The CLI's file contract: outputs replace regular files only (FIFOs and directories are refused
# before any work, symbolic links are written through), inputs must be regular files (a
# directory is named as one, never an allocation of its "size"), PREFIX outputs are written
# together or not at all, and option mistakes are one stderr line naming the file or option.
# Exits 77 when something it needs is missing.
source "$(dirname "$0")/common.sh" clierr || { echo "FAIL: cannot source common.sh" >&2; exit 1; }
T=$TMP
# A FIFO opened for writing waits for a reader: a regression must fail, not hang.
if command -v timeout >/dev/null 2>&1; then TO="timeout 120"; else TO=""; fi

# Errors: exit status non-zero and exactly one stderr line containing the needle.
expect_error() { # name needle command...
  local name=$1 needle=$2; shift 2
  $TO "$@" > /dev/null 2> "$T/err.txt" && fail "$name: succeeded"
  [ "$(wc -l < "$T/err.txt")" -eq 1 ] || fail "$name: stderr has $(wc -l < "$T/err.txt") lines: $(cat "$T/err.txt")"
  grep -q -- "$needle" "$T/err.txt" || fail "$name: '$(cat "$T/err.txt")' does not say $needle"
}

"$CLI" synth "$T/clips" --clips 3 --seed 3 > /dev/null || fail "synth"
"$CLI" build "$T/clips" -o "$T/a.pmdb" --fps 30 --quiet || fail "build"
"$CLI" export-features "$T/a.pmdb" -o "$T/x" || fail "export-features"
D=$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['cardinality'])" "$T/x.json") || fail "cardinality"
head -c $((D * 4)) "$T/x.f32" > "$T/q.f32"
mkdir "$T/empty" "$T/dir"
mkfifo "$T/fifo" "$T/fifo.f32" "$T/sq_noisy.f32" "$T/fifo.bvh" || fail "mkfifo"
cat > "$T/space.json" <<JSON
{"name": "s", "axes": [{"name": "speed", "min": 0, "max": 4}],
 "samples": [{"name": "a", "clip": "clips/synth_000.bvh", "params": [1.0]},
             {"name": "b", "clip": "clips/synth_001.bvh", "params": [3.0]}]}
JSON

# 0. An option whose value is forgotten does not take the next option as its value: no file named
#    "--quiet" or "--json", no swallowed --frame.
( cd "$T" && expect_error "build -o --quiet" "incomplete option '-o'" "$CLI" build "$T/clips" -o --quiet ) || exit 1
[ -e "$T/--quiet" ] && fail "build -o --quiet wrote a file named --quiet"
( cd "$T" && expect_error "export-features -o --json" "incomplete option '-o'" "$CLI" export-features "$T/a.pmdb" -o --json ) || exit 1
expect_error "search --query-clip --frame" "incomplete option '--query-clip'" "$CLI" search "$T/a.pmdb" --query-clip --frame 4
( cd "$T" && expect_error "blend -o --weights" "incomplete option '-o'" "$CLI" blend "$T/space.json" --param 2 -o --weights ) || exit 1

# 1. Outputs that exist and are not regular files are refused before the work and left alone.
expect_error "build -o FIFO" "fifo: not a regular file (a FIFO)" "$CLI" build "$T/clips" -o "$T/fifo" --quiet
[ -p "$T/fifo" ] || fail "build -o FIFO replaced the FIFO"
expect_error "build -o DIR" "dir: is a directory" "$CLI" build "$T/clips" -o "$T/dir" --quiet
expect_error "export-features -o PREFIX with a FIFO" "fifo.f32: not a regular file" "$CLI" export-features "$T/a.pmdb" -o "$T/fifo"
[ -e "$T/fifo.json" ] && fail "export-features wrote PREFIX.json although PREFIX.f32 could not be written"
[ -p "$T/fifo.f32" ] || fail "export-features replaced the FIFO"
expect_error "bench --save-queries over a FIFO" "sq_noisy.f32: not a regular file" \
  "$CLI" bench "$T/a.pmdb" --queries 5 --save-queries "$T/sq"
expect_error "blend -o FIFO" "fifo.bvh: not a regular file" "$CLI" blend "$T/space.json" --param 2 -o "$T/fifo.bvh"
[ -p "$T/fifo.bvh" ] || fail "blend -o FIFO replaced the FIFO"
# PREFIX.f32 and PREFIX.json together or not at all: an old PREFIX.f32 stays when PREFIX.json
# cannot be written.
printf 'old' > "$T/pair.f32"
mkdir "$T/pair.json"
expect_error "export-features with PREFIX.json a directory" "pair.json: is a directory" \
  "$CLI" export-features "$T/a.pmdb" -o "$T/pair"
[ "$(cat "$T/pair.f32")" = old ] || fail "export-features replaced PREFIX.f32 although PREFIX.json failed"
mkdir "$T/pair2.f32"
expect_error "export-features with PREFIX.f32 a directory" "pair2.f32: is a directory" \
  "$CLI" export-features "$T/a.pmdb" -o "$T/pair2"
[ -e "$T/pair2.json" ] && fail "export-features wrote PREFIX.json although PREFIX.f32 failed"
expect_error "bench --save-queries over a directory" "sqd_noisy.f32: is a directory" \
  sh -c 'mkdir "$1/sqd_noisy.f32" && exec "$2" bench "$1/a.pmdb" --queries 5 --save-queries "$1/sqd"' sh "$T" "$CLI"
if [ "$(id -u)" != 0 ]; then # root writes anywhere
  mkdir "$T/ro" && chmod 555 "$T/ro"
  expect_error "bench --save-queries into a read-only directory" "sq_noisy.f32: cannot create: Permission denied" \
    "$CLI" bench "$T/a.pmdb" --queries 5 --save-queries "$T/ro/sq"
  chmod 755 "$T/ro"
fi
ls -A "$T" "$T"/* | grep -q '^\.pm-' && fail "a failed write left a temporary file"

# Symbolic links are written through: the file they name is replaced, the link stays a link.
printf 'old' > "$T/real.pmdb"
ln -s real.pmdb "$T/link.pmdb"
"$CLI" build "$T/clips" -o "$T/link.pmdb" --fps 30 --quiet || fail "build -o SYMLINK"
[ -L "$T/link.pmdb" ] || fail "build -o SYMLINK replaced the link"
cmp -s "$T/a.pmdb" "$T/real.pmdb" || fail "build -o SYMLINK did not write the file the link names"
mkdir "$T/sub"
ln -s sub/new.pmdb "$T/dangling.pmdb"
ln -s ../dangling.pmdb "$T/sub/chain.pmdb"
"$CLI" build "$T/clips" -o "$T/sub/chain.pmdb" --fps 30 --quiet || fail "build -o a chain ending in a dangling link"
[ -L "$T/sub/chain.pmdb" ] && [ -L "$T/dangling.pmdb" ] || fail "build -o a chain of links replaced a link"
cmp -s "$T/a.pmdb" "$T/sub/new.pmdb" || fail "build -o a dangling link did not create the file it names"
printf 'old' > "$T/real.f32"
ln -s real.f32 "$T/lx.f32"
"$CLI" export-features "$T/a.pmdb" -o "$T/lx" || fail "export-features -o PREFIX through a link"
[ -L "$T/lx.f32" ] && cmp -s "$T/x.f32" "$T/real.f32" || fail "export-features did not write through the link"
ln -s real.bvh "$T/lb.bvh"
"$CLI" blend "$T/space.json" --param 2 -o "$T/lb.bvh" > /dev/null || fail "blend -o SYMLINK"
[ -L "$T/lb.bvh" ] && [ -s "$T/real.bvh" ] || fail "blend -o SYMLINK did not write through the link"
ln -s dir "$T/dirlink.pmdb"
expect_error "build -o a link to a directory" "dirlink.pmdb: is a directory" "$CLI" build "$T/clips" -o "$T/dirlink.pmdb"
# ...except, as the kernel's protected_symlinks rule has it, another user's link in a shared
# sticky directory (a link planted in /tmp): refused, the file it names untouched.
if [ "$(id -u)" -eq 0 ]; then
  mkdir "$T/shared" && chmod 1777 "$T/shared"
  printf 'precious' > "$T/precious"
  ln -s ../precious "$T/shared/out.pmdb" && chown -h 65534 "$T/shared/out.pmdb"
  expect_error "build -o a planted link" "out.pmdb: not followed" "$CLI" build "$T/clips" -o "$T/shared/out.pmdb" --quiet
  [ "$(cat "$T/precious")" = precious ] || fail "a planted link's target was written"
else
  echo "note: not root, the planted-link check is skipped"
fi
expect_error "build -o ''" "output path is empty" "$CLI" build "$T/clips" -o ""
expect_error "build --cache ''" "build: --cache: the directory path is empty" \
  "$CLI" build "$T/clips" -o "$T/e.pmdb" --cache "" --quiet
[ -e "$T/e.pmdb" ] && fail "build --cache '' wrote its output"
# A --cache that cannot be a directory is refused before the work (the build went on and only
# warned that the entry could not be stored); a missing one is created, its parent must exist.
expect_error "build --cache FILE" "a.pmdb: --cache: not a directory (a regular file)" \
  "$CLI" build "$T/clips" -o "$T/e.pmdb" --cache "$T/a.pmdb" --quiet
expect_error "build --cache in a missing directory" "nodir/c: --cache: its parent directory does not exist" \
  "$CLI" build "$T/clips" -o "$T/e.pmdb" --cache "$T/nodir/c" --quiet
[ -e "$T/e.pmdb" ] || [ -e "$T/nodir" ] && fail "a refused --cache build wrote something"
"$CLI" build "$T/clips" -o "$T/e.pmdb" --cache "$T/newcache/" --quiet && [ "$(ls "$T/newcache" | wc -l)" -eq 1 ] \
  || fail "build --cache NEWDIR/ did not create the cache and store its entry"
rm -rf "$T/e.pmdb" "$T/newcache"

# 2. Inputs that are directories or other non-regular files are named as such.
expect_error "info DIR" "empty: is a directory" "$CLI" info "$T/empty"
expect_error "info FIFO" "fifo: not a regular file (a FIFO)" "$CLI" info "$T/fifo"
expect_error "search DIR" "empty: is a directory" "$CLI" search "$T/empty" --queries "$T/q.f32"
expect_error "export-features DIR" "empty: is a directory" "$CLI" export-features "$T/empty" -o "$T/e"
expect_error "bench DIR" "empty: is a directory" "$CLI" bench "$T/empty"
expect_error "search --queries DIR" "empty: is a directory" "$CLI" search "$T/a.pmdb" --queries "$T/empty"
expect_error "search --weights DIR" "empty: is a directory" "$CLI" search "$T/a.pmdb" --queries "$T/q.f32" --weights "$T/empty"
expect_error "build --schema DIR/" "empty/: is a directory" "$CLI" build "$T/clips" -o "$T/e.pmdb" --schema "$T/empty/"
expect_error "blend DIR" "empty: is a directory" "$CLI" blend "$T/empty" --param 1 --weights
expect_error "search missing queries" "nothere.f32: cannot open: No such file" "$CLI" search "$T/a.pmdb" --queries "$T/nothere.f32"
# A NaN in the third query: refused before any result is printed.
python3 -c "
import struct, sys
rows = open(sys.argv[1], 'rb').read() * 3
open(sys.argv[2], 'wb').write(rows[:-4] + struct.pack('<f', float('nan')))" "$T/q.f32" "$T/q_nan.f32" || fail "q_nan.f32"
expect_error "search --queries with a NaN" "q_nan.f32: query 2 value $((D - 1)) (nan) is not finite" \
  "$CLI" search "$T/a.pmdb" --queries "$T/q_nan.f32"
[ -z "$("$CLI" search "$T/a.pmdb" --queries "$T/q_nan.f32" 2>/dev/null)" ] || fail "search printed results before a bad query"
# Query rows through a pipe are fine.
"$CLI" search "$T/a.pmdb" --queries <(cat "$T/q.f32") > /dev/null || fail "search --queries from a pipe"

# 3. A directory without .bvh files (qsort of nothing was undefined behaviour).
expect_error "build EMPTYDIR" "empty: no .bvh files found" "$CLI" build "$T/empty" -o "$T/e.pmdb"
expect_error "bench --far EMPTYDIR" "empty: no .bvh files found" "$CLI" bench "$T/a.pmdb" --queries 5 --far "$T/empty"
[ -e "$T/e.pmdb" ] && fail "a failed build left a file"

# 5. A PREFIX that names no file.
expect_error "export-features -o ''" "names no file" "$CLI" export-features "$T/a.pmdb" -o ""
expect_error "export-features -o DIR/" "names no file" "$CLI" export-features "$T/a.pmdb" -o "$T/dir/"

# 6. Bad dynamic weights name the weights file and the dimension, not the query file.
python3 - "$T" "$D" <<'PY' || fail "weights file"
import array, sys
w = array.array("f", [1.0] * int(sys.argv[2])); w[3] = -1.0
open(sys.argv[1] + "/w.f32", "wb").write(w.tobytes())
PY
expect_error "negative weight" "w.f32 (--weights): dimension 3 .*weight -1 is outside" "$CLI" search "$T/a.pmdb" --queries "$T/q.f32" --weights "$T/w.f32"
: > "$T/w0.f32"
expect_error "empty weights file" "w0.f32: the weights file is empty" "$CLI" search "$T/a.pmdb" --queries "$T/q.f32" --weights "$T/w0.f32"
# ... a weight past the largest allowed (1e12) likewise; and one row of weights, not two.
python3 - "$T" "$D" <<'PY' || fail "weights files"
import array, sys
w = array.array("f", [1.0] * int(sys.argv[2])); w[3] = 2e12
open(sys.argv[1] + "/w_big.f32", "wb").write(w.tobytes())
open(sys.argv[1] + "/w_two.f32", "wb").write(array.array("f", [1.0] * (2 * int(sys.argv[2]))).tobytes())
PY
expect_error "weight past 1e12" "w_big.f32 (--weights): dimension 3 .*weight 2e+12 is outside 0..1e+12" \
  "$CLI" search "$T/a.pmdb" --queries "$T/q.f32" --weights "$T/w_big.f32"
expect_error "two rows of weights" "w_two.f32 (--weights): dynamic weights must be one row" \
  "$CLI" search "$T/a.pmdb" --queries "$T/q.f32" --weights "$T/w_two.f32"

# 9. Option mistakes.
expect_error "--frame with --queries" "--frame goes with --query-clip" "$CLI" search "$T/a.pmdb" --queries "$T/q.f32" --frame 3
expect_error "--mirror-pair A=A" "pairs a joint with itself" "$CLI" build "$T/clips" -o "$T/e.pmdb" --mirror --mirror-pair LeftFoot=LeftFoot
expect_error "a clip given twice" "synth_001.bvh: input given twice" \
  "$CLI" build "$T/clips/synth_001.bvh" "$T/clips/./synth_001.bvh" -o "$T/e.pmdb"
expect_error "a clip given alone and in its directory" "synth_000.bvh: input given twice" \
  "$CLI" build "$T/clips" "$T/clips/synth_000.bvh" -o "$T/e.pmdb"
expect_error "integer range printed plainly" "in 0..2147483647" "$CLI" search "$T/a.pmdb" --queries "$T/q.f32" --continuing 1e10
"$CLI" --help > "$T/help.txt" || fail "--help"
grep -q "posematch build CLIP.bvh|SPACE.json|DIR\.\.\." "$T/help.txt" || fail "--help: build does not show directories"
grep -q "posematch bench .*--far" "$T/help.txt" || fail "--help: bench does not show --far"

# --query-clip on a clip with a rest-pose lead-in frame (CMU 01_01, 120 fps): frame 0 is not in
# the database and says so; frame F is the database's frame F - 1 (mapped without the lead-in,
# it was the pose one frame later).
CMU=$MOCAP/cmu/01_01.bvh
if [ -f "$CMU" ]; then
  "$CLI" build "$CMU" -o "$T/cmu.pmdb" --fps 120 --quiet || fail "build CMU 01_01"
  expect_error "--frame of a dropped lead-in" "rest-pose lead-in frame the database drops (build --keep-rest-frame keeps it)" "$CLI" search "$T/cmu.pmdb" --query-clip "$CMU" --frame 0
  "$CLI" search "$T/cmu.pmdb" --query-clip "$CMU" --frame 40 --json > "$T/cmu.json" || fail "search CMU --frame 40"
  python3 - "$T/cmu.json" <<'PY' || fail "--query-clip frame after a lead-in"
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
assert r["found"] and r["frame"] == 39 and r["cost"] < 1e-3, r
PY
  "$CLI" build "$CMU" -o "$T/cmu_keep.pmdb" --fps 120 --keep-rest-frame --quiet || fail "build CMU --keep-rest-frame"
  "$CLI" search "$T/cmu_keep.pmdb" --query-clip "$CMU" --frame 0 > /dev/null || fail "--frame 0 with the lead-in kept"
else
  echo "note: $CMU not found, --query-clip lead-in check skipped"
fi
# --loop reads a --query-clip as a looping asset was built: a clip built with --loop finds its own
# first frames at cost 0 only when read the same way.
"$CLI" build "$T/clips/synth_000.bvh" -o "$T/loop.pmdb" --loop --fps 30 --quiet || fail "build --loop"
"$CLI" search "$T/loop.pmdb" --query-clip "$T/clips/synth_000.bvh" --frame 0 --loop --json > "$T/loopq.json" || fail "search --loop"
python3 - "$T" <<'PY' || fail "search --loop finds the clip's own frame"
import json, sys
r = json.load(open(sys.argv[1] + "/loopq.json"))["results"][0]
assert r["frame"] == 0 and r["cost"] < 1e-4, r
PY
expect_error "--loop without --query-clip" "reads a --query-clip" "$CLI" search "$T/loop.pmdb" --queries "$T/q.f32" --loop
# --unit-scale/--up read a --query-clip (and bench's --far clips) as a database built with them
# read its clips: the clip's own frame is then found at cost 0, where detected units find another.
"$CLI" build "$T/clips/synth_000.bvh" -o "$T/units.pmdb" --unit-scale 0.02 --fps 30 --quiet || fail "build --unit-scale"
"$CLI" search "$T/units.pmdb" --query-clip "$T/clips/synth_000.bvh" --frame 12 --unit-scale 0.02 --json \
  > "$T/unitsq.json" || fail "search --unit-scale"
python3 - "$T" <<'PY' || fail "search --unit-scale finds the clip's own frame"
import json, sys
r = json.load(open(sys.argv[1] + "/unitsq.json"))["results"][0]
assert r["frame"] == 12 and r["cost"] < 1e-4, r
PY
"$CLI" search "$T/units.pmdb" --query-clip "$T/clips/synth_000.bvh" --frame 12 --json > "$T/unitsd.json" \
  || fail "search with detected units"
python3 - "$T" <<'PY' || fail "detected units (half the database's scale) still matched at cost 0"
import json, sys
r = json.load(open(sys.argv[1] + "/unitsd.json"))["results"][0]
assert r["cost"] > 1e-2, r
PY
# A clip read in units no person's hips fit (centimetres taken for metres) is searched with a
# warning naming the units; a clip read right says nothing.
"$CLI" search "$T/units.pmdb" --query-clip "$T/clips/synth_000.bvh" --frame 12 --unit-scale 1 > /dev/null \
  2> "$T/warn.txt" || fail "search with implausible units exited $?"
grep -q "warning: .*synth_000.bvh: the hips stand [0-9.]* m above the feet (read at 1 m per file unit" "$T/warn.txt" \
  || fail "no units warning: $(cat "$T/warn.txt")"
"$CLI" search "$T/units.pmdb" --query-clip "$T/clips/synth_000.bvh" --frame 12 --unit-scale 0.02 > /dev/null \
  2> "$T/warn.txt" && [ ! -s "$T/warn.txt" ] || fail "a clip read in its units warned: $(cat "$T/warn.txt")"
"$CLI" build "$T/clips/synth_000.bvh" "$T/clips/synth_001.bvh" -o "$T/giant.pmdb" --unit-scale 1 --quiet \
  2> "$T/warn.txt" || fail "build with implausible units exited $?"
grep -q "warning: 2 of 2 clips stand where no person does" "$T/warn.txt" || fail "no build units warning: $(cat "$T/warn.txt")"
# --unit-scale outranks a blend space's units: the clips baked from it stand as tall and are
# counted (they were left out, yet counted in the total: "1 of 4 clips" for four giants).
"$CLI" build "$T/space.json" "$T/clips/synth_002.bvh" -o "$T/giant.pmdb" --unit-scale 1 --quiet \
  2> "$T/warn.txt" || fail "build of a space with implausible units exited $?"
grep -q "warning: 4 of 4 clips stand where no person does (.*; .*space.json: " "$T/warn.txt" \
  || fail "no units warning for a blend space: $(cat "$T/warn.txt")"
"$CLI" build "$T/space.json" -o "$T/giant.pmdb" --unit-scale 0.01 --quiet 2> "$T/warn.txt" && [ ! -s "$T/warn.txt" ] \
  || fail "a space read in its units warned: $(cat "$T/warn.txt")"
expect_error "--continuing-addend alone" "applies to the --continuing pose" \
  "$CLI" search "$T/units.pmdb" --queries "$T/q.f32" --continuing-addend -1
expect_error "--neighbors with exact" "applies to --mode pcakdtree, not exact" \
  "$CLI" search "$T/units.pmdb" --queries "$T/q.f32" --neighbors 8
expect_error "--up without --query-clip" "read a --query-clip" "$CLI" search "$T/units.pmdb" --queries "$T/q.f32" --up y
expect_error "bench --unit-scale without --far" "read --far clips" "$CLI" bench "$T/units.pmdb" --unit-scale 0.02
"$CLI" bench "$T/units.pmdb" --queries 5 --far "$T/clips/synth_001.bvh" --unit-scale 0.02 --up y > /dev/null \
  || fail "bench --far with --unit-scale and --up"
# 10. Directory scans (build DIR, bench --far DIR): a symbolic link back to its own directory is
#     not followed again (two of them made ~2^33 visits), a clip deeper than the old 32-level
#     limit is found, and a path longer than the system allows is an error, never a silent skip.
mkdir "$T/cyc" && cp "$T/clips/synth_000.bvh" "$T/cyc/" && ln -s . "$T/cyc/a" && ln -s . "$T/cyc/b"
mkdir "$T/cyc/sub" && cp "$T/clips/synth_001.bvh" "$T/cyc/sub/" && ln -s .. "$T/cyc/sub/up"
$TO "$CLI" build "$T/cyc" -o "$T/cyc.pmdb" --quiet --json > "$T/cyc.json" || fail "build DIR with symbolic link cycles"
python3 -c "import json, sys; assert json.load(open(sys.argv[1]))['assets'] == 2" "$T/cyc.json" \
  || fail "a cycle's clips counted twice"
$TO "$CLI" bench "$T/a.pmdb" --queries 5 --far "$T/cyc" > /dev/null 2>&1 \
  || fail "bench --far DIR with symbolic link cycles"
deep="$T/deep"; for i in $(seq 40); do deep="$deep/d"; done
mkdir -p "$deep" && cp "$T/clips/synth_002.bvh" "$deep/"
"$CLI" build "$T/deep" -o "$T/deep.pmdb" --quiet || fail "build DIR with a clip 40 levels down"
python3 - "$T" <<'PY' || fail "a path longer than PATH_MAX"
import os, shutil, sys
t = sys.argv[1]
os.mkdir(t + "/long"); os.chdir(t + "/long")
for _ in range(22):  # 22 x 201 characters, past the 4096 of PATH_MAX
    os.mkdir("n" * 200); os.chdir("n" * 200)
shutil.copy(t + "/clips/synth_000.bvh", "x.bvh")
PY
expect_error "build DIR with a path past PATH_MAX" "longer than the system allows" \
  "$CLI" build "$T/long" -o "$T/long.pmdb"
ln -s missing.bvh "$T/cyc/broken.bvh"
expect_error "build DIR with a broken link named *.bvh" "broken.bvh: a broken symbolic link" \
  "$CLI" build "$T/cyc" -o "$T/e.pmdb"
rm "$T/cyc/broken.bvh"
# A link that cannot be followed for another reason than a missing target is no broken link: its
# error is said as it is.
ln -s "$(printf 'x%.0s' $(seq 300)).bvh" "$T/cyc/long.bvh"
expect_error "build DIR with a link to a name past NAME_MAX" "long.bvh: cannot examine: File name too long" \
  "$CLI" build "$T/cyc" -o "$T/e.pmdb"
rm "$T/cyc/long.bvh"

# 11. Output names up to NAME_MAX: the temporary file beside the output has a short name of its own.
long=$(printf 'o%.0s' $(seq 245))
"$CLI" build "$T/clips" -o "$T/$long.pmdb" --quiet || fail "build -o a 250-character file name"
"$CLI" export-features "$T/a.pmdb" -o "$T/$long" || fail "export-features -o a 245-character PREFIX"
"$CLI" blend "$T/space.json" --param 2 -o "$T/$long.bvh" > /dev/null || fail "blend -o a 249-character file name"
ls -A "$T" | grep -q '^\.pm-' && fail "a write left a temporary file"
# A --save-queries P whose P_noisy.f32 passes PATH_MAX is refused: the name was cut to fit (and the
# cut name, 4095 characters long, written).
LP=$(python3 - "$T" <<'PY'
import os, sys
d = sys.argv[1] + "/lp"
while len(d) < 4060:
    d += "/" + "d" * min(200, 4060 - len(d) - 1)
os.makedirs(d)
print(d + "/" + "q" * (4090 - len(d) - 1))
PY
) || fail "long --save-queries directories"
expect_error "bench --save-queries past PATH_MAX" "bench: --save-queries P is too long (P_noisy.f32" \
  "$CLI" bench "$T/a.pmdb" --queries 2 --save-queries "$LP"
[ -z "$(find "$T/lp" -type f)" ] || fail "bench --save-queries past PATH_MAX wrote $(find "$T/lp" -type f | tail -c 40)"
expect_error "build --cache past PATH_MAX" "build: --cache DIR is too long" \
  "$CLI" build "$T/clips" -o "$T/e.pmdb" --quiet --cache "$(dirname "$LP")"
[ -z "$(find "$T/lp" -type f)" ] || fail "build --cache past PATH_MAX wrote $(find "$T/lp" -type f | tail -c 40)"

# 12. An output that is one of the inputs is refused before it is overwritten, by any name.
cp "$T/clips/synth_000.bvh" "$T/in0.bvh" && cp "$T/clips/synth_001.bvh" "$T/in1.bvh" && ln -s in0.bvh "$T/lin0.bvh"
expect_error "build -o an input" "in0.bvh: the output is also an input" \
  "$CLI" build "$T/in0.bvh" "$T/in1.bvh" -o "$T/in0.bvh"
expect_error "build -o a link to an input" "lin0.bvh: the output is also an input, as" \
  "$CLI" build "$T/in0.bvh" "$T/in1.bvh" -o "$T/lin0.bvh"
expect_error "build -o a clip in an input directory" "the output is also an input" \
  "$CLI" build "$T/clips" -o "$T/clips/synth_001.bvh"
cmp -s "$T/in0.bvh" "$T/clips/synth_000.bvh" && cmp -s "$T/clips/synth_001.bvh" "$T/in1.bvh" \
  || fail "an input was overwritten"
# (A clip named .bvh is refused as an output name first, section 18: this space's first sample
# is a take named otherwise.)
cp "$T/clips/synth_000.bvh" "$T/take0.mocap"
sed 's|clips/synth_000.bvh|take0.mocap|' "$T/space.json" > "$T/space_take.json"
expect_error "build -o a blend space's clip" "take0.mocap: the output is also an input" \
  "$CLI" build "$T/space_take.json" -o "$T/take0.mocap"
cmp -s "$T/take0.mocap" "$T/clips/synth_000.bvh" || fail "build overwrote a blend space's clip"
expect_error "blend -o a sample's clip" "synth_001.bvh: the output is also an input" \
  "$CLI" blend "$T/space.json" --param 2 -o "$T/./clips/synth_001.bvh"
expect_error "blend -o the space" "space.json: the output is also an input" \
  "$CLI" blend "$T/space.json" --param 2 -o "$T/space.json"
cmp -s "$T/in1.bvh" "$T/clips/synth_001.bvh" || fail "blend overwrote a sample's clip"
cp "$T/a.pmdb" "$T/db.json"
expect_error "export-features over its database" "db.json: the output is also an input" \
  "$CLI" export-features "$T/db.json" -o "$T/db"
cmp -s "$T/a.pmdb" "$T/db.json" || fail "export-features overwrote its database"

# 13. blend checks -o before the work, as build does: the missing directory is reported even
#     though the space's clip is missing too.
sed 's/synth_001/nothere/' "$T/space.json" > "$T/space_bad.json"
expect_error "blend -o into a missing directory" "o.bvh: cannot create: its directory does not exist" \
  "$CLI" blend "$T/space_bad.json" --param 2 -o "$T/nodir/o.bvh"

# 14. synth is all or nothing: a target that cannot be written fails the run before any clip is
#     written, and a write failing midway (a file size limit here) leaves no clip and no
#     temporary file; a directory synth created is removed again.
mkdir -p "$T/syn/synth_005.bvh"
expect_error "synth over a directory named like a clip" "synth_005.bvh: is a directory" "$CLI" synth "$T/syn" --clips 10
[ "$(ls -A "$T/syn")" = synth_005.bvh ] || fail "a failed synth left files: $(ls -A "$T/syn")"
expect_error "synth with a file size limit" "cannot write" \
  bash -c 'trap "" XFSZ; ulimit -f 70; exec "$1" synth "$2/synf" --clips 12' sh "$CLI" "$T"
[ -e "$T/synf" ] && fail "a failed synth left its directory: $(ls -A "$T/synf")"
mkdir "$T/synf2"
expect_error "synth into a directory with a file size limit" "cannot write" \
  bash -c 'trap "" XFSZ; ulimit -f 70; exec "$1" synth "$2/synf2" --clips 12' sh "$CLI" "$T"
[ -z "$(ls -A "$T/synf2")" ] || fail "a failed synth left files: $(ls -A "$T/synf2")"

# 15. Options that take one value are refused when given twice (the last silently won), flags too
#     (a repeated flag in a script is most often a copy that meant another option), a joint in
#     two --mirror-pair pairs likewise, and numbers are decimal (--frame 0x10 was frame 16).
( cd "$T" && expect_error "build -o twice" "build: -o given twice ('x1' and 'x2')" "$CLI" build clips -o x1 -o x2 ) || exit 1
expect_error "build -o and --output" "given twice" "$CLI" build "$T/clips" -o "$T/x1" --output "$T/x2"
expect_error "build --up twice" "build: --up given twice" "$CLI" build "$T/clips" -o "$T/x1" --up y --up z
expect_error "build --fps twice" "build: --fps given twice" "$CLI" build "$T/clips" -o "$T/x1" --fps 30 --fps 60
expect_error "export-features -o twice" "export-features: -o given twice" \
  "$CLI" export-features "$T/a.pmdb" -o "$T/x1" -o "$T/x2"
expect_error "search --frame twice" "search: --frame given twice ('3' and '4')" \
  "$CLI" search "$T/a.pmdb" --query-clip "$T/clips/synth_000.bvh" --frame 3 --frame 4
expect_error "search --mode twice" "search: --mode given twice" \
  "$CLI" search "$T/a.pmdb" --queries "$T/q.f32" --mode exact --mode vptree
expect_error "synth --clips twice" "synth: --clips given twice ('2' and '3')" "$CLI" synth "$T/syn2" --clips 2 --clips 3
[ -e "$T/syn2" ] && fail "synth with a repeated option created its directory"
expect_error "bench --queries twice" "bench: --queries given twice" "$CLI" bench "$T/a.pmdb" --queries 3 --queries 4
expect_error "bench with two databases" "bench: one database at a time" "$CLI" bench "$T/a.pmdb" "$T/loop.pmdb"
expect_error "inspect --unit-scale twice" "inspect: --unit-scale given twice" \
  "$CLI" inspect "$T/clips/synth_000.bvh" --unit-scale 0.01 --unit-scale 1
expect_error "blend --fps twice" "blend: --fps given twice" \
  "$CLI" blend "$T/space.json" --param 2 -o "$T/x1.bvh" --fps 30 --fps 60
expect_error "info --json twice" "info: --json given twice" "$CLI" info "$T/a.pmdb" --json --json
expect_error "info --verify twice" "info: --verify given twice" "$CLI" info --verify "$T/a.pmdb" --verify
expect_error "build -q and --quiet" "build: --quiet given twice" "$CLI" build "$T/clips" -o "$T/x1" -q --quiet
expect_error "build --mirror twice" "build: --mirror given twice" "$CLI" build "$T/clips" -o "$T/x1" --mirror --mirror
expect_error "search --loop twice" "search: --loop given twice" \
  "$CLI" search "$T/a.pmdb" --queries "$T/q.f32" --loop --loop
expect_error "inspect --json twice" "inspect: --json given twice" "$CLI" inspect "$T/clips/synth_000.bvh" --json --json
expect_error "blend --weights twice" "blend: --weights given twice" \
  "$CLI" blend "$T/space.json" --param 2 --weights --weights
expect_error "bench --json twice" "bench: --json given twice" "$CLI" bench "$T/a.pmdb" --json --json
[ -e "$T/x1" ] && fail "a build with a repeated flag wrote its output"
expect_error "a joint in two mirror pairs" "LeftFoot is already paired by --mirror-pair 'LeftFoot=RightFoot'" \
  "$CLI" build "$T/clips" -o "$T/e.pmdb" --mirror --mirror-pair LeftFoot=RightFoot --mirror-pair LeftFoot=Head
expect_error "a joint in two mirror pairs (second place)" "RightFoot is already paired" \
  "$CLI" build "$T/clips" -o "$T/e.pmdb" --mirror --mirror-pair LeftFoot=RightFoot --mirror-pair Head=RightFoot
expect_error "search --frame in hexadecimal" "--frame '0x10' must be a decimal integer" \
  "$CLI" search "$T/a.pmdb" --query-clip "$T/clips/synth_000.bvh" --frame 0x10
expect_error "synth --clips in hexadecimal" "--clips '0x3' must be a decimal integer" "$CLI" synth "$T/syn2" --clips 0x3
expect_error "build --fps inf" "--fps 'inf' must be a decimal number" "$CLI" build "$T/clips" -o "$T/x1" --fps inf
expect_error "build --hips-axis in hexadecimal" "--hips-axis '0x1,0,0' must be three decimal numbers" \
  "$CLI" build "$T/clips" -o "$T/x1" --hips-axis 0x1,0,0
for f in x1 x2 x1.bvh; do [ -e "$T/$f" ] && fail "a refused command wrote $f"; done

# 16. Values each command checks against its inputs, one more input than a command takes, option
#     values outside their words, and combinations that do nothing.
N=$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['poses'])" "$T/x.json") || fail "poses"
expect_error "search --continuing past the last pose" "search: --continuing $N is not a pose of .*a.pmdb (0..$((N - 1)))" \
  "$CLI" search "$T/a.pmdb" --queries "$T/q.f32" --continuing "$N"
F=$("$CLI" inspect "$T/clips/synth_000.bvh" --json | python3 -c "import json, sys; print(json.load(sys.stdin)['frames'])") || fail "frames"
expect_error "search --frame past the clip" "synth_000.bvh: --frame $F is past the clip's last frame $((F - 1))" \
  "$CLI" search "$T/a.pmdb" --query-clip "$T/clips/synth_000.bvh" --frame "$F"
head -c $((D * 4 - 4)) "$T/x.f32" > "$T/wshort.f32"
expect_error "search --weights one value short" "wshort.f32: $((D * 4 - 4)) bytes is not a whole number of rows of $D float32 values" \
  "$CLI" search "$T/a.pmdb" --queries "$T/q.f32" --weights "$T/wshort.f32"
expect_error "search with two databases" "search: one database at a time" "$CLI" search "$T/a.pmdb" "$T/a.pmdb" --queries "$T/q.f32"
expect_error "info with two databases" "info: one database at a time" "$CLI" info "$T/a.pmdb" "$T/a.pmdb"
expect_error "export-features with two databases" "the output prefix goes after -o" "$CLI" export-features "$T/a.pmdb" "$T/x3" -o "$T/x4"
expect_error "blend with two spaces" "blend: one blend space at a time" "$CLI" blend "$T/space.json" "$T/space.json" --param 2 --weights
expect_error "blend without a space" "blend: no SPACE.json given" "$CLI" blend --param 2 --weights
expect_error "blend --json with only -o" "blend: --json goes with --weights" "$CLI" blend "$T/space.json" --param 2 -o "$T/x1.bvh" --json
expect_error "blend --json alone" "blend: --json goes with --weights" "$CLI" blend "$T/space.json" --param 2 --json
{ cat "$T/space.json"; printf '\0garbage'; } > "$T/nul.json"
expect_error "blend: a NUL byte after the document" "nul.json:$(($(wc -l < "$T/space.json") + 1)): a NUL byte (a JSON file is text)" \
  "$CLI" blend "$T/nul.json" --param 2 --weights
# --param of the wrong size for the space is a usage error like every other --param error (status 2).
"$CLI" blend "$T/space.json" --param 1,2 --weights > /dev/null 2>&1; rc=$?
[ "$rc" -eq 2 ] || fail "blend --param of two values for a 1D space exited $rc, not 2"
expect_error "blend --fps without -o" "blend: --fps is the rate of -o OUT.bvh" "$CLI" blend "$T/space.json" --param 2 --weights --fps 30
expect_error "build --facing feet" "build: --facing 'feet' must be legs or hips" "$CLI" build "$T/clips" -o "$T/x1" --facing feet
expect_error "build --ground up" "build: --ground 'up' must be detect or zero" "$CLI" build "$T/clips" -o "$T/x1" --ground up
expect_error "build --mirror-pair without =" "build: --mirror-pair 'LeftFoot' must be JOINT=JOINT" \
  "$CLI" build "$T/clips" -o "$T/x1" --mirror --mirror-pair LeftFoot
expect_error "build of a folder without clips" "empty: no .bvh files found in the directory" "$CLI" build "$T/empty" -o "$T/x1"
for f in x1 x2 x3.f32 x4.f32 x1.bvh; do [ -e "$T/$f" ] && fail "a refused command wrote $f"; done
# Every command's --help is its usage on stdout and success, whatever else is on the line.
for c in inspect build info search export-features bench blend synth; do
  "$CLI" $c --help > "$T/h.txt" 2> "$T/herr.txt" || fail "$c --help failed"
  head -1 "$T/h.txt" | grep -q "^usage: posematch $c " || fail "$c --help: $(head -1 "$T/h.txt")"
  [ -s "$T/herr.txt" ] && fail "$c --help wrote to stderr: $(cat "$T/herr.txt")"
  "$CLI" $c "$T/a.pmdb" --help > /dev/null || fail "$c DB --help failed"
done

# 17. Output stdout cannot take (a full disk) fails the command: a truncated result must not pass
#     for a whole one. Only inspect checked; every command goes through main's check now.
if [ -w /dev/full ]; then
  expect_full() { # name command...
    local name=$1; shift
    "$@" > /dev/full 2> "$T/err.txt" && fail "$name > /dev/full: succeeded"
    [ "$(wc -l < "$T/err.txt")" -eq 1 ] && grep -q "cannot write to stdout" "$T/err.txt" \
      || fail "$name > /dev/full: $(cat "$T/err.txt")"
  }
  expect_full "inspect" "$CLI" inspect "$T/clips/synth_000.bvh"
  expect_full "info --json" "$CLI" info "$T/a.pmdb" --json
  expect_full "search" "$CLI" search "$T/a.pmdb" --queries "$T/q.f32"
  expect_full "bench --json" "$CLI" bench "$T/a.pmdb" --queries 3 --json
  expect_full "build --json" "$CLI" build "$T/clips" -o "$T/full.pmdb" --quiet --json
  expect_full "blend --weights" "$CLI" blend "$T/space.json" --param 2 --weights
  expect_full "--help" "$CLI" --help
  "$CLI" synth "$T/syn3" --clips 1 > /dev/full || fail "synth, which prints nothing, failed on a full stdout"
else
  echo "note: no /dev/full, the full-stdout check is skipped"
fi

# 18. An output named with the extension of another kind of file is refused before the work: a
#     database written to walk.bvh replaced a clip that was not an input (or became a "clip" a
#     later build of the folder failed on), a blend written to db.pmdb replaced a database.
cp "$T/clips/synth_002.bvh" "$T/other.bvh" && cp "$T/a.pmdb" "$T/keep.pmdb"
expect_error "build -o CLIP.bvh" "other.bvh: -o ends in .bvh, the extension of BVH clips, but the output is a database (name it .pmdb)" \
  "$CLI" build "$T/clips/synth_000.bvh" -o "$T/other.bvh"
cmp -s "$T/other.bvh" "$T/clips/synth_002.bvh" || fail "build -o CLIP.bvh replaced the clip"
expect_error "build -o X.JSON" "ends in .json" "$CLI" build "$T/clips" -o "$T/x1.JSON"
expect_error "build -o X.f32" "ends in .f32" "$CLI" build "$T/clips" -o "$T/x1.f32"
expect_error "blend -o DB.pmdb" "keep.pmdb: -o ends in .pmdb, the extension of databases, but the output is a BVH clip (name it .bvh)" \
  "$CLI" blend "$T/space.json" --param 2 -o "$T/keep.pmdb"
cmp -s "$T/keep.pmdb" "$T/a.pmdb" || fail "blend -o DB.pmdb replaced the database"
expect_error "blend -o X.json" "ends in .json" "$CLI" blend "$T/space.json" --param 2 -o "$T/x1.json"
for f in x1.JSON x1.f32 x1.json; do [ -e "$T/$f" ] && fail "a refused command wrote $f"; done
# Other names, and none, are the user's: only the extensions of other known kinds are refused.
"$CLI" build "$T/clips" -o "$T/db.bin" --quiet && cmp -s "$T/db.bin" "$T/a.pmdb" || fail "build -o db.bin"
"$CLI" blend "$T/space.json" --param 2 -o "$T/mid.txt" > /dev/null && [ -s "$T/mid.txt" ] || fail "blend -o mid.txt"

# 19. Clips are read on the builder's threads: the error is the first failing file's in input order,
#     whichever thread read it first, and the database is the same bytes for any thread count.
mkdir "$T/order"
head -c 300 "$T/clips/synth_000.bvh" > "$T/order/bad_first.bvh"
printf 'HIERARCHY\nnot a joint\n' > "$T/order/bad_second.bvh"
for threads in 1 2 4 4 4; do
  expect_error "build --threads $threads, two bad clips" "bad_first.bvh" \
    "$CLI" build "$T/clips/synth_000.bvh" "$T/order/bad_first.bvh" "$T/clips/synth_001.bvh" "$T/order/bad_second.bvh" \
    -o "$T/order/x.pmdb" --threads $threads
done
[ -e "$T/order/x.pmdb" ] && fail "a build with bad clips wrote its database"
"$CLI" build "$T/clips" -o "$T/order/t1.pmdb" --threads 1 --quiet && "$CLI" build "$T/clips" -o "$T/order/t3.pmdb" --threads 3 --quiet \
  && cmp -s "$T/order/t1.pmdb" "$T/order/t3.pmdb" || fail "builds with 1 and 3 threads differ"
#     A reader blocked opening a FIFO no one writes still ends on SIGTERM (the signal lands on any
#     thread; the others are sent it): 143, one line, nothing written, whatever the thread count.
for threads in 1 2 4 8; do
  "$CLI" build "$T/clips/synth_000.bvh" "$T/clips/synth_001.bvh" "$T/fifo.bvh" "$T/clips/synth_002.bvh" \
    -o "$T/order/f.pmdb" --threads $threads 2> "$T/err.txt" &
  pid=$!
  sleep 0.3
  kill -s TERM "$pid"
  for k in $(seq 1 50); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2> /dev/null; then kill -s KILL "$pid"; wait "$pid"; fail "--threads $threads: SIGTERM while a reader waits on a FIFO: still running after 5 s"; fi
  wait "$pid"
  status=$?
  [ "$status" -eq 143 ] || fail "--threads $threads: SIGTERM while a reader waits on a FIFO: status $status ($(cat "$T/err.txt"))"
  grep -q "interrupted (SIGTERM): nothing was written" "$T/err.txt" && [ "$(wc -l < "$T/err.txt")" -eq 1 ] \
    || fail "--threads $threads: SIGTERM while a reader waits on a FIFO: $(cat "$T/err.txt")"
  [ -e "$T/order/f.pmdb" ] && fail "--threads $threads: an interrupted build wrote its database"
done

# Ctrl-C, SIGTERM or SIGHUP (a closed terminal) during a build (reading clips, or building: the library's progress callback
# cancels it) ends it with the shell's status for the signal, one line, and nothing written: no
# database and no temporary file. 600 copies of the clips at 120 fps build for several seconds;
# the signal comes after half of one.
mkdir "$T/many" "$T/out"
for k in $(seq 1 200); do for f in "$T"/clips/synth_00?.bvh; do cp "$f" "$T/many/k${k}_$(basename "$f")"; done; done
# Job control: without it a script starts its background jobs with SIGINT ignored (below), which
# is not what Ctrl-C at a terminal meets.
set -m
# The last run reads the clips on two threads and is interrupted while reading them.
for run in INT:1:0.5 TERM:1:0.5 HUP:1:0.5 INT:2:0.15; do
  IFS=: read -r sig threads after <<< "$run"
  "$CLI" build "$T/many" -o "$T/out/big.pmdb" --fps 120 --mirror --threads "$threads" 2> "$T/err.txt" &
  pid=$!
  sleep "$after"
  kill -s "$sig" "$pid"
  wait "$pid"
  status=$?
  want=$((128 + $(kill -l "$sig")))
  [ "$status" -eq "$want" ] || fail "build interrupted by SIG$sig: status $status, expected $want ($(cat "$T/err.txt"))"
  tail -n 1 "$T/err.txt" | grep -q "^posematch: build: interrupted (SIG$sig): nothing was written$" ||
    fail "build interrupted by SIG$sig: $(cat "$T/err.txt")"
  [ -z "$(ls -A "$T/out")" ] || fail "build interrupted by SIG$sig left $(ls -A "$T/out")"
done
# Signals its caller ignored (`trap '' INT TERM`; a script's background job, for SIGINT) stay
# ignored: the build goes on and writes its database.
# (57 of the copies: a signal that came too late finds the build done, and the test still holds.)
trap '' INT TERM
"$CLI" build "$T"/many/k?_* "$T"/many/k1?_* -o "$T/out/kept.pmdb" --quiet &
pid=$!
trap - INT TERM
sleep 0.2
kill -s INT "$pid" 2> /dev/null && kill -s TERM "$pid" 2> /dev/null
wait "$pid" || fail "a build whose caller ignores SIGINT and SIGTERM: status $?"
[ -s "$T/out/kept.pmdb" ] || fail "a build whose caller ignores SIGINT and SIGTERM wrote nothing"
set +m

# 20. A mistake on the command line is status 2 (a usage error), whatever the command and the
#     option; a command that fails on its inputs is status 1. Each is one line saying what is wrong,
#     with the range or the values taken.
expect_usage() { # name message command...: status 2, one stderr line, the message in it
  local name=$1 needle=$2; shift 2
  "$@" > /dev/null 2> "$T/err.txt"
  local rc=$?
  [ "$rc" -eq 2 ] || fail "$name: exit status $rc, not 2 (stderr: $(cat "$T/err.txt"))"
  [ "$(wc -l < "$T/err.txt")" -eq 1 ] || fail "$name: stderr has $(wc -l < "$T/err.txt") lines: $(cat "$T/err.txt")"
  grep -qF -- "$needle" "$T/err.txt" || fail "$name: '$(cat "$T/err.txt")' does not say $needle"
}
B=("$CLI" build "$T/clips" -o "$T/u.pmdb")
expect_usage "no command" "no command given" "$CLI"
"$CLI" --version > "$T/version.txt" 2>&1 || fail "--version failed"
grep -qxE "posematch [0-9]+\.[0-9]+\.[0-9]+.*" "$T/version.txt" || fail "--version: $(cat "$T/version.txt")"
expect_usage "unknown command" "unknown command 'bogus' (try posematch --help)" "$CLI" bogus
expect_usage "build --exclude-start -1" "build: --exclude-start '-1' must be a decimal number in 0..100000" "${B[@]}" --exclude-start -1
expect_usage "build --exclude-end -1" "build: --exclude-end '-1' must be a decimal number in 0..100000" "${B[@]}" --exclude-end -1
expect_usage "build --fps 0" "build: --fps '0' must be a decimal number in 1..1000" "${B[@]}" --fps 0
expect_usage "build --threads 65" "build: --threads '65' must be a decimal integer in 1..64" "${B[@]}" --threads 65
expect_usage "build --pca 0" "build: --pca '0' must be a decimal integer in 1..64" "${B[@]}" --pca 0
expect_usage "build --exact-components 65" "build: --exact-components '65' must be a decimal integer in 0..64" "${B[@]}" --exact-components 65
expect_usage "build --exact-leaf 7" "build: --exact-leaf '7' must be a decimal integer in 8..4096" "${B[@]}" --exact-leaf 7
expect_usage "build --root-smoothing 3" "build: --root-smoothing '3' must be a decimal number in 0..2" "${B[@]}" --root-smoothing 3
expect_usage "build --hips-axis beyond 1e6" "build: --hips-axis '2e6,0,0' must be three decimal numbers X,Y,Z within +-1e6" \
  "${B[@]}" --facing hips --hips-axis 2e6,0,0
expect_usage "build --hips-axis of two values" "--hips-axis '0,1' must be three decimal numbers" "${B[@]}" --facing hips --hips-axis 0,1
expect_usage "build --hips-axis of four values" "--hips-axis '0,1,0,0' must be three decimal numbers" "${B[@]}" --facing hips --hips-axis 0,1,0,0
expect_usage "build --unit-scale 0" "build: --unit-scale '0' must be a decimal number in 1e-06..1000000" "${B[@]}" --unit-scale 0
expect_usage "build --up x" "build: --up 'x' must be y or z" "${B[@]}" --up x
expect_usage "build --addend x" "build: --addend 'x' must be PATTERN=COST or PATTERN@START:END=COST" "${B[@]}" --addend x
expect_usage "build --exclude x" "build: --exclude 'x' must be PATTERN@START:END (seconds of the clip)" "${B[@]}" --exclude x
expect_usage "build --mirror twice" "build: --mirror given twice" "${B[@]}" --mirror --mirror
expect_usage "build --fps twice" "build: --fps given twice ('30' and '30')" "${B[@]}" --fps 30 --fps 30
expect_usage "build without -o" "build: no output given (-o DB.pmdb)" "$CLI" build "$T/clips"
expect_usage "build without inputs" "build: no input clips given" "$CLI" build -o "$T/u.pmdb"
expect_usage "build -o ''" "build: -o: the output path is empty" "$CLI" build "$T/clips" -o ''
expect_usage "build --cache ''" "build: --cache: the directory path is empty" "${B[@]}" --cache ''
expect_usage "build --mirror-pair without --mirror" "build: --mirror-pair needs --mirror" "${B[@]}" --mirror-pair A=B
expect_usage "build --mirror-pair A=A" "build: --mirror-pair 'A=A' pairs a joint with itself" "${B[@]}" --mirror --mirror-pair A=A
expect_usage "build --mirror-pair twice for one joint" "build: --mirror-pair 'C=A': A is already paired by --mirror-pair 'A=B'" \
  "${B[@]}" --mirror --mirror-pair A=B --mirror-pair C=A
expect_usage "build --hips-axis without --facing hips" "build: --hips-axis applies to --facing hips" "${B[@]}" --hips-axis 1,0,0
expect_usage "build --fps without a value, at the end" "build: unknown or incomplete option '--fps'" "${B[@]}" --fps 30 --fps
expect_usage "build --fps without a value" "build: unknown or incomplete option '--fps'" "${B[@]}" --fps 30 --fps --quiet
expect_usage "build --unit-scale without a value" "build: unknown or incomplete option '--unit-scale'" "${B[@]}" --unit-scale
expect_usage "inspect --up without a value" "inspect: unknown or incomplete option '--up'" "$CLI" inspect "$T/clips/synth_000.bvh" --up
expect_usage "build --frobnicate" "build: unknown or incomplete option '--frobnicate'" "${B[@]}" --frobnicate
expect_usage "blend --weights twice" "blend: --weights given twice" "$CLI" blend "$T/space.json" --param 2 --weights --weights
expect_usage "blend --param 1e39" "blend: --param value '1e39' is beyond the single-precision range" \
  "$CLI" blend "$T/space.json" --param 1e39 --weights
expect_usage "blend --param of four values" "blend: --param '1,2,3,4' must be one to three decimal numbers" \
  "$CLI" blend "$T/space.json" --param 1,2,3,4 --weights
expect_usage "blend --param ending in a comma" "blend: --param '2,' must be one to three decimal numbers" \
  "$CLI" blend "$T/space.json" --param 2, --weights
expect_usage "blend --unit-scale 0" "blend: --unit-scale '0' must be a decimal number in 1e-06..1000000" \
  "$CLI" blend "$T/space.json" --param 2 --weights --unit-scale 0
expect_usage "blend --up q" "blend: --up 'q' must be y or z" "$CLI" blend "$T/space.json" --param 2 --weights --up q
expect_usage "blend without --param" "blend: --param X[,Y[,Z]] is required" "$CLI" blend "$T/space.json" --weights
expect_usage "blend without -o or --weights" "blend: nothing to do: give -o OUT.bvh and/or --weights" "$CLI" blend "$T/space.json" --param 2
expect_usage "blend --fps 0" "blend: --fps '0' must be a decimal number in 0.001..10000" \
  "$CLI" blend "$T/space.json" --param 2 -o "$T/u.bvh" --fps 0
expect_usage "blend --frobnicate" "blend: unknown or incomplete option '--frobnicate'" "$CLI" blend "$T/space.json" --param 2 --frobnicate
expect_usage "blend without a space" "blend: no SPACE.json given" "$CLI" blend --param 2 --weights
expect_usage "inspect --json twice" "inspect: --json given twice" "$CLI" inspect "$T/clips/synth_000.bvh" --json --json
expect_usage "inspect --up q" "inspect: --up 'q' must be y or z" "$CLI" inspect "$T/clips/synth_000.bvh" --up q
expect_usage "inspect --unit-scale -1" "inspect: --unit-scale '-1' must be a decimal number in 1e-06..1000000" \
  "$CLI" inspect "$T/clips/synth_000.bvh" --unit-scale -1
expect_usage "inspect without a clip" "inspect: no BVH file given" "$CLI" inspect
expect_usage "inspect of two clips" "inspect: one clip at a time ('a' and 'b')" "$CLI" inspect a b
expect_usage "inspect --frobnicate" "inspect: unknown or incomplete option '--frobnicate'" "$CLI" inspect "$T/clips/synth_000.bvh" --frobnicate
expect_usage "synth --clips 0" "synth: --clips '0' must be a decimal integer in 1..10000" "$CLI" synth "$T/u" --clips 0
expect_usage "synth --clips 10001" "synth: --clips '10001' must be a decimal integer in 1..10000" "$CLI" synth "$T/u" --clips 10001
expect_usage "synth --seed -1" "synth: --seed '-1' must be a decimal integer in 0..4294967295" "$CLI" synth "$T/u" --seed -1
expect_usage "synth --seed 2^32" "synth: --seed '4294967296' must be a decimal integer in 0..4294967295" "$CLI" synth "$T/u" --seed 4294967296
expect_usage "synth --fps 9" "synth: --fps '9' must be a decimal number in 10..240" "$CLI" synth "$T/u" --fps 9
expect_usage "synth --fps 241" "synth: --fps '241' must be a decimal number in 10..240" "$CLI" synth "$T/u" --fps 241
expect_usage "synth --name ''" "synth: --name '' must be 1..40 characters" "$CLI" synth "$T/u" --name ''
expect_usage "synth --name .x" "synth: --name '.x' must be 1..40 characters, no path separator, not starting with '.'" "$CLI" synth "$T/u" --name .x
expect_usage "synth --name a/b" "synth: --name 'a/b' must be 1..40 characters" "$CLI" synth "$T/u" --name a/b
expect_usage "synth --name of 41 characters" "must be 1..40 characters" "$CLI" synth "$T/u" --name "$(printf 'n%.0s' $(seq 41))"
expect_usage "synth --clips twice" "synth: --clips given twice ('2' and '3')" "$CLI" synth "$T/u" --clips 2 --clips 3
expect_usage "synth without a directory" "synth: no output directory given" "$CLI" synth
expect_usage "synth of two directories" "synth: one output directory" "$CLI" synth "$T/u" "$T/v"
expect_usage "synth --frobnicate" "synth: unknown or incomplete option '--frobnicate'" "$CLI" synth "$T/u" --frobnicate
expect_usage "bench --queries 0" "bench: --queries '0' must be a decimal integer in 1..1000000" "$CLI" bench "$T/a.pmdb" --queries 0
expect_usage "bench --sigma -1" "bench: --sigma '-1' must be a decimal number in 0..100" "$CLI" bench "$T/a.pmdb" --sigma -1
expect_usage "bench --neighbors 0" "bench: --neighbors '0' must be a decimal integer in 1..1000000" "$CLI" bench "$T/a.pmdb" --neighbors 0
expect_usage "bench --max-nodes -1" "bench: --max-nodes '-1' must be a decimal integer in 0..100000000" "$CLI" bench "$T/a.pmdb" --max-nodes -1
expect_usage "bench --passes 0" "bench: --passes '0' must be a decimal integer in 1..15" "$CLI" bench "$T/a.pmdb" --passes 0
expect_usage "bench --passes 16" "bench: --passes '16' must be a decimal integer in 1..15" "$CLI" bench "$T/a.pmdb" --passes 16
expect_usage "bench --passes twice" "bench: --passes given twice ('2' and '3')" "$CLI" bench "$T/a.pmdb" --passes 2 --passes 3
expect_usage "bench --seed -1" "bench: --seed '-1' must be a decimal integer in 0..2147483647" "$CLI" bench "$T/a.pmdb" --seed -1
expect_usage "bench --threads 257" "bench: --threads '257' must be a decimal integer in 1..256" "$CLI" bench "$T/a.pmdb" --threads 257
expect_usage "bench --json twice" "bench: --json given twice" "$CLI" bench "$T/a.pmdb" --json --json
expect_usage "bench without a database" "bench: no database given" "$CLI" bench
expect_usage "bench --far without a clip" "bench: unknown or incomplete option '--far'" "$CLI" bench "$T/a.pmdb" --far
[ -e "$T/u.pmdb" ] || [ -e "$T/u.bvh" ] || [ -e "$T/u" ] || [ -e "$T/v" ] && fail "a usage error wrote a file"
# Values at the ends of their ranges are taken.
"$CLI" synth "$T/u" --clips 1 --fps 10 --seed 4294967295 --name "$(printf 'n%.0s' $(seq 40))" > /dev/null \
  || fail "synth at the ends of its ranges"
"$CLI" build "$T/clips/synth_000.bvh" -o "$T/u.pmdb" --fps 1000 --threads 64 --exact-leaf 4096 --root-smoothing 2 \
  --exclude-end 0 --facing hips --hips-axis 1e6,0,0 --quiet || fail "build at the ends of its ranges"
# Failing on the inputs is status 1.
"$CLI" build "$T/missing.bvh" -o "$T/v.pmdb" > /dev/null 2>&1; rc=$?
[ "$rc" -eq 1 ] || fail "build of a missing clip exited $rc, not 1"
"$CLI" inspect "$T/missing.bvh" > /dev/null 2>&1; rc=$?
[ "$rc" -eq 1 ] || fail "inspect of a missing clip exited $rc, not 1"
"$CLI" blend "$T/missing.json" --param 2 --weights > /dev/null 2>&1; rc=$?
[ "$rc" -eq 1 ] || fail "blend of a missing space exited $rc, not 1"

# A 32-bit CLI: a 2-frame clip of 4096 joints resampled to 1000 fps has 2^21 + 1 frames, and frames
# x joints (2^33 + 4096) wrapped a 32-bit size_t to 4096: the clip was allocated a sliver and
# filled past it (SIGSEGV). It is out of memory now. A 64-bit size_t holds the count, and its
# allocation (134 GB) is not one to attempt in a test.
if LC_ALL=C readelf -h "$CLI" 2> /dev/null | grep -q 'Class: *ELF32'; then
  awk 'BEGIN {
    print "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation"
    for (j = 1; j < 4096; j++) {
      name = j == 1 ? "LeftFoot" : j == 2 ? "RightFoot" : "j" j
      print "  JOINT " name "\n  {\n    OFFSET 0 1 0\n    CHANNELS 3 Zrotation Xrotation Yrotation"
      print "    End Site\n    {\n      OFFSET 0 1 0\n    }\n  }"
    }
    print "}\nMOTION\nFrames: 2\nFrame Time: 2097.152"
    for (f = 0; f < 2; f++) { line = "0"; for (v = 1; v < 6 + 3 * 4095; v++) line = line " 0"; print line }
  }' > "$T/star.bvh"
  expect_error "32-bit: frames x joints past the address space" "more than the address space" \
    "$CLI" build "$T/star.bvh" -o "$T/star.pmdb" --fps 1000 --quiet
fi
echo "ok"
