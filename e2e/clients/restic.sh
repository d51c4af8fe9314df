#!/usr/bin/env bash
# restic suite: init a repository in a bucket, back up a generated tree
# (hundreds of small files, a few MiB of them, and one file larger than a
# 16 MiB pack), check --read-data, restore into a new directory and compare
# byte for byte; then a changed tree's second backup, restored the same way,
# and forget --prune down to one snapshot, checked again.
# Needs ENDPOINT, AWS credentials and WORK; SCHEME=https also CERT.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

T=$(mktemp -d "$WORK/restic.XXXX")
B="restic-$SCHEME-$RANDOM"
export RESTIC_PASSWORD="restic suite password"
export RESTIC_CACHE_DIR="$T/cache"
R=(restic -r "s3:$ENDPOINT/$B")
[ "$SCHEME" = https ] && R+=(--cacert "$CERT")
export R_CMD="${R[*]}"
echo "$(restic version)"

make_tree "$T/src" 400
for i in $(seq 1 20); do head -c $((100 << 10)) /dev/urandom >"$T/src/d$((i % 7))/blob$i.bin"; done
head -c $((20 << 20)) /dev/urandom >"$T/src/large.bin"
mkdir -p "$T/src/empty dir" "$T/src/name with spaces"
printf 'spaces\n' >"$T/src/name with spaces/ünïcödé.txt"

check "init" "${R[@]}" init
expect_fail "init twice fails" "already\|exists" "${R[@]}" init
check "backup" "${R[@]}" backup --host suite "$T/src"
check "snapshots lists one" bash -c "equals 1 \$($R_CMD snapshots --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')"
check "check --read-data" "${R[@]}" check --read-data
check "restore latest" "${R[@]}" restore latest --target "$T/restore"
check "restored tree identical" same_tree "$T/src" "$T/restore$T/src"

echo changed >"$T/src/d1/f1.txt"
rm "$T/src/d2/f2.txt"
head -c $((1 << 20)) /dev/urandom >"$T/src/new.bin"
check "second backup" "${R[@]}" backup --host suite "$T/src"
check "snapshots lists two" bash -c "equals 2 \$($R_CMD snapshots --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')"
check "check --read-data after second backup" "${R[@]}" check --read-data
check "restore latest again" "${R[@]}" restore latest --target "$T/restore2"
check "second restore identical" same_tree "$T/src" "$T/restore2$T/src"
check "forget --prune keeps the last" "${R[@]}" forget --keep-last 1 --prune
check "check after prune" "${R[@]}" check --read-data
check "snapshots lists one after forget" bash -c "equals 1 \$($R_CMD snapshots --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')"
rm -rf "$T"
finish
