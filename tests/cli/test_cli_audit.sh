#!/usr/bin/env bash
# Findings of a CLI audit on the real clips: each check is a contract point that once failed.
# Exits 77 when something it needs is missing (the real clips included).
source "$(dirname "$0")/common.sh" cliaudit || { echo "FAIL: cannot source common.sh" >&2; exit 1; }
T=$TMP
[ -d "$MOCAP/cmu" ] || { echo "SKIP: no real clips in $MOCAP"; exit 77; }

# Errors: exit status non-zero and exactly one stderr line containing the needle (fixed string).
expect_error() { # name needle command...
  local name=$1 needle=$2; shift 2
  "$@" > /dev/null 2> "$T/err.txt" && fail "$name: succeeded"
  [ "$(wc -l < "$T/err.txt")" -eq 1 ] || fail "$name: stderr has $(wc -l < "$T/err.txt") lines: $(cat "$T/err.txt")"
  grep -qF -- "$needle" "$T/err.txt" || fail "$name: '$(cat "$T/err.txt")' does not say $needle"
}

# 1. build --json with a stdout that cannot take the line: one stderr line, the error (the
#    summary announcing the database used to come first), built or taken from the cache. One
#    clip, so that the build ends before progress lines start (after a second), even on a slow
#    or emulated machine (`make test-aarch64`).
"$CLI" build "$MOCAP/cmu" -o "$T/c.pmdb" --quiet || fail "build"
one="$MOCAP/cmu/01_01.bvh"
"$CLI" build "$one" -o "$T/one.pmdb" --cache "$T/cache" --quiet || fail "build --cache"
if [ -c /dev/full ] && ! sh -c 'echo x > /dev/full' 2> /dev/null; then
  expect_error "build --json > /dev/full" "build: cannot write to stdout" \
    sh -c 'exec "$1" build "$2" -o "$3/full.pmdb" --json > /dev/full' sh "$CLI" "$one" "$T"
  expect_error "build --json > /dev/full, cache hit" "build: cannot write to stdout" \
    sh -c 'exec "$1" build "$2" -o "$3/full2.pmdb" --cache "$3/cache" --json > /dev/full' sh "$CLI" "$one" "$T"
fi

# 2. A schema file whose every value weighs 0 is named in the error, and refused before the clips
#    are read (it was "schema 'x': every feature's weight is 0", without the file, after them).
printf '%s' '{"name": "x", "channels": [{"kind": "group", "weight": 0, "channels": [
  {"kind": "position", "bone": "@left_foot"},
  {"kind": "trajectory", "samples": [{"offset": 0.5, "flags": ["PositionXY"]}]}]},
  {"kind": "trajectory", "samples": [{"offset": 0.2, "weight": 0, "flags": ["Position"]}]},
  {"kind": "padding", "size": 2}]}' > "$T/zero.json"
expect_error "schema of zero weights" "zero.json: every feature's weight is 0" \
  "$CLI" build "$MOCAP/cmu" -o "$T/zero.pmdb" --schema "$T/zero.json" --quiet
[ -e "$T/zero.pmdb" ] && fail "a refused build wrote its output"
# One weighted sample is enough.
sed 's/"weight": 0, "flags"/"weight": 0.5, "flags"/' "$T/zero.json" > "$T/one.json"
"$CLI" build "$MOCAP/cmu" -o "$T/one.pmdb" --schema "$T/one.json" --quiet || fail "a schema with one weighted sample"

# 3. With --mirror, info lists the copies as <name>.mirror, but --addend and --exclude match the
#    clips, whose rules the copies take: a pattern for the copies alone says so instead of a bare
#    "matches no asset" about assets that info shows; the copies do take their clip's rules.
expect_error "--addend for the mirrored copies" "a mirrored copy such as '01_01.mirror' takes the --addend rules of its clip, '01_01'" \
  "$CLI" build "$MOCAP/cmu" -o "$T/m.pmdb" --mirror --addend '*.mirror=1' --quiet
expect_error "--exclude for a mirrored copy" "takes the --exclude rules of its clip, '01_01'" \
  "$CLI" build "$MOCAP/cmu" -o "$T/m.pmdb" --mirror --exclude '01_01.mirror@1:2' --quiet
expect_error "--addend for a copy without --mirror" "build: --addend '*.mirror=1' matches no asset" \
  "$CLI" build "$MOCAP/cmu" -o "$T/m.pmdb" --addend '*.mirror=1' --quiet
[ -e "$T/m.pmdb" ] && fail "a refused build wrote its output"
"$CLI" build "$MOCAP/cmu" -o "$T/m.pmdb" --mirror --addend '01_01=0.5' --quiet || fail "build --mirror --addend"
"$CLI" info "$T/m.pmdb" --assets | grep -q "01_01.mirror: .*cost addend 0.5" || fail "the copy lost its clip's addend"

# 4. An --addend or --exclude span that starts after the end of every clip it matches (frames or
#    minutes meant for seconds) changed nothing and succeeded silently: it is an error naming the
#    clip's length. A span reaching into one matching clip is fine.
expect_error "--addend past the clip" "--addend '01_01@100:200=1': the span starts at 100 s, after the end of the clip it matches ('01_01' lasts 22.9" \
  "$CLI" build "$MOCAP/cmu" -o "$T/s.pmdb" --addend '01_01@100:200=1' --quiet
expect_error "--exclude past every clip" "after the end of every clip it matches, the longest ('01_01'" \
  "$CLI" build "$MOCAP/cmu" -o "$T/s.pmdb" --exclude '*@30:40' --quiet
[ -e "$T/s.pmdb" ] && fail "a refused build wrote its output"
"$CLI" build "$MOCAP/cmu" -o "$T/s.pmdb" --exclude '*@20:40' --addend '01_01@22.9:30=1' --quiet || fail "spans inside a clip"

# 5. search --query-clip and bench --far name the clip's file when the database's schema cannot
#    read it (they said "clip 'x'", which a path in another folder does not find).
sed 's/lFoot/LFx/g; s/rFoot/RFx/g' "$MOCAP/cmu/02_01_daz.bvh" > "$T/nofeet2.bvh"
expect_error "search: a query clip without feet" "nofeet2.bvh: schema channel 1 (Position @left_foot): no joint '@left_foot'" \
  "$CLI" search "$T/c.pmdb" --query-clip "$T/nofeet2.bvh" --frame 5
expect_error "bench: a far clip without feet" "nofeet2.bvh: schema channel 1 (Position @left_foot): no joint '@left_foot'" \
  "$CLI" bench "$T/c.pmdb" --queries 3 --far "$T/nofeet2.bvh"

# 6. --query-clip with an absurd Frame Time (1e30 s): the frame's row was converted to int out of
#    range before the resample refused the clip (undefined behaviour: a sanitized build printed a
#    runtime error beside the message). The reader now refuses frames longer than an hour at the
#    Frame Time line; the longest it takes still gives one line, the resample's refusal, naming
#    the file.
sed 's/^Frame Time:.*/Frame Time: 1e30/' "$MOCAP/cmu/02_01_daz.bvh" > "$T/slow.bvh"
expect_error "search: a clip of 1e30 s frames" "slow.bvh:275: Frame Time: '1e30' is above 3600 s" \
  "$CLI" search "$T/c.pmdb" --query-clip "$T/slow.bvh" --frame 5
sed 's/^Frame Time:.*/Frame Time: 3600/' "$MOCAP/cmu/02_01_daz.bvh" > "$T/slow.bvh"
expect_error "search: a clip of hour-long frames" "slow.bvh: resample: clip 'slow' (343 frames of 3600 s) at 30 fps would have" \
  "$CLI" search "$T/c.pmdb" --query-clip "$T/slow.bvh" --frame 5

# 7. An output name longer than the file system takes is refused before the work, as a missing
#    directory is (it was written whole under a temporary name, then the rename failed).
long=$(printf 'a%.0s' $(seq 300))
expect_error "build -o a 300-byte name" "$long.pmdb: cannot create: File name too long" \
  "$CLI" build "$MOCAP/cmu" -o "$T/$long.pmdb" --quiet
expect_error "export-features -o a 300-byte prefix" "$long.f32: cannot create: File name too long" \
  "$CLI" export-features "$T/c.pmdb" -o "$T/$long"
ls -A "$T" | grep -q '^\.pm-' && fail "a refused write left a temporary file"

# 8. Messages about files deep in long paths (600 bytes, legal) keep the file's name and the
#    problem: the 512-byte message was cut at its end, leaving "posematch: /eee...ee" alone.
deep="$T/$(printf 'e%.0s' $(seq 200))/$(printf 'f%.0s' $(seq 200))/$(printf 'g%.0s' $(seq 200))"
expect_error "inspect: a missing clip in a long path" "gg/nope.bvh: cannot open: No such file or directory" \
  "$CLI" inspect "$deep/nope.bvh"
expect_error "build -o into a missing long path" "gg/x.pmdb: cannot create: its directory does not exist" \
  "$CLI" build "$MOCAP/cmu" -o "$deep/x.pmdb" --quiet
mkdir -p "$deep" || fail "mkdir a long path"
head -c 3000 "$MOCAP/cmu/02_01_daz.bvh" > "$deep/cut.bvh"
expect_error "build: a truncated clip in a long path" "gg/cut.bvh:" "$CLI" build "$deep/cut.bvh" -o "$T/cut.pmdb" --quiet
grep -q "the file ends inside joint" "$T/err.txt" || fail "the problem was cut: $(cat "$T/err.txt")"
# Paths of a few KB (4096 is Linux's PATH_MAX) too: messages are formatted whole up to 8 KB
# (above 1.5 KB they were cut at their end as before).
deeper="$deep"; for c in h i j k l m n o p q r s t; do deeper="$deeper/$(printf "$c%.0s" $(seq 200))"; done
mkdir -p "$deeper" && cp "$deep/cut.bvh" "$deeper/cut.bvh" || fail "mkdir a 3 KB path"
expect_error "build: a truncated clip in a 3 KB path" "tt/cut.bvh:" "$CLI" build "$deeper/cut.bvh" -o "$T/cut.pmdb" --quiet
grep -q "the file ends inside joint" "$T/err.txt" || fail "the problem was cut: $(cat "$T/err.txt")"
printf '%s' '{"name": "x", "channels": [{"kind": "position", "bone": "@left_hand"}]}' > "$deep/s.json"
expect_error "build: a schema in a long path" "gg/s.json: channels[0]: schema channel 0 (Position @left_hand): unknown role" \
  "$CLI" build "$MOCAP/cmu" -o "$T/cut.pmdb" --schema "$deep/s.json" --quiet

# 9. The cache key covers End Sites: a foot without a toe joint stands on its End Site (the floor
#    under every root moves with it), and an edited one (same file name) was served the database
#    of the clip before the edit from --cache.
mkdir -p "$T/es" && cp "$MOCAP/cmu/02_01_daz.bvh" "$T/es/daz.bvh" && chmod u+w "$T/es/daz.bvh" || fail "copy a clip"
"$CLI" build "$T/es/daz.bvh" -o "$T/es1.pmdb" --cache "$T/escache" --quiet || fail "build before the End Site edit"
python3 - "$T/es/daz.bvh" <<'PY2' || fail "edit the End Site"
import re, sys
p = sys.argv[1]
s = open(p, newline="").read()
s, n = re.subn(r"(JOINT lFoot\s*\{[^{}]*End Site\s*\{\s*OFFSET \S+ )(\S+)", lambda m: m.group(1) + "-9.5", s, count=1)
assert n == 1
open(p, "w", newline="").write(s)
PY2
"$CLI" build "$T/es/daz.bvh" -o "$T/es2.pmdb" --cache "$T/escache" --quiet --json > "$T/es2.json" \
  || fail "build after the End Site edit"
"$CLI" build "$T/es/daz.bvh" -o "$T/es3.pmdb" --quiet || fail "build after the End Site edit, no cache"
grep -q '"cache_hit": false' "$T/es2.json" || fail "an edited End Site was a cache hit: $(cat "$T/es2.json")"
cmp -s "$T/es2.pmdb" "$T/es3.pmdb" || fail "the cached build of the edited clip differs from a fresh one"
"$CLI" export-features "$T/es1.pmdb" -o "$T/esx1" > /dev/null && "$CLI" export-features "$T/es3.pmdb" -o "$T/esx3" > /dev/null \
  || fail "export-features"
cmp -s "$T/esx1.f32" "$T/esx3.f32" && fail "the End Site edit no longer changes the features (the check proves nothing)"

echo "ok"
