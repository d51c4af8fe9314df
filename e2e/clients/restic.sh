#!/usr/bin/env bash
# restic suite: init a repository in a bucket, back up a generated tree
# (hundreds of small files, a few MiB of them, and one file larger than a
# 16 MiB pack), check --read-data, restore into a new directory and compare
# byte for byte; then a changed tree's second backup, restored the same way,
# and forget --prune down to one snapshot, checked again. All of it twice:
# in a bucket restic creates, and in a versioned bucket (how backups are
# kept safe from a client that deletes them), where prune's deletes must
# leave delete markers over versions that stay.
# Needs ENDPOINT, AWS credentials and WORK; SCHEME=https also CERT. The
# versioned bucket is made with Debian's aws-cli (/usr/bin/aws).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

T=$(mktemp -d "$WORK/restic.XXXX")
export RESTIC_PASSWORD="restic suite password"
export RESTIC_CACHE_DIR="$T/cache"
echo "$(restic version)"
aws() { /usr/bin/aws --endpoint-url "$ENDPOINT" "$@"; }

make_tree "$T/src" 400
for i in $(seq 1 20); do head -c $((100 << 10)) /dev/urandom >"$T/src/d$((i % 7))/blob$i.bin"; done
head -c $((20 << 20)) /dev/urandom >"$T/src/large.bin"
mkdir -p "$T/src/empty dir" "$T/src/name with spaces"
printf 'spaces\n' >"$T/src/name with spaces/ünïcödé.txt"

# count_versions BUCKET FIELD: how many entries of FIELD (Versions or
# DeleteMarkers) the bucket's version listing holds.
count_versions() {
	aws s3api list-object-versions --bucket "$1" --query "length($2 || \`[]\`)" --output text
}

# markers_over_versions BUCKET: some delete markers, and more versions
# than current objects (what the markers hide is still there).
markers_over_versions() {
	local markers versions current
	markers=$(count_versions "$1" DeleteMarkers) || return 1
	versions=$(count_versions "$1" Versions) || return 1
	current=$(aws s3 ls --recursive "s3://$1" | wc -l) || return 1
	echo "$markers markers, $versions versions, $current current objects"
	[ "$markers" -gt 0 ] && [ "$versions" -gt "$current" ]
}

# run_suite LABEL BUCKET: the whole suite against one bucket, its tree
# copied so both runs start from the same files.
run_suite() {
	local label=$1 B=$2
	local S="$T/$label"
	cp -a "$T/src" "$S"
	R=(restic -r "s3:$ENDPOINT/$B")
	[ "$SCHEME" = https ] && R+=(--cacert "$CERT")
	R_CMD="${R[*]}"
	export R_CMD
	echo "-- restic, $label bucket"
	check "$label: init" "${R[@]}" init
	expect_fail "$label: init twice fails" "already\|exists" "${R[@]}" init
	check "$label: backup" "${R[@]}" backup --host suite "$S"
	check "$label: snapshots lists one" bash -c "equals 1 \$($R_CMD snapshots --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')"
	check "$label: check --read-data" "${R[@]}" check --read-data
	check "$label: restore latest" "${R[@]}" restore latest --target "$S.restore"
	check "$label: restored tree identical" same_tree "$S" "$S.restore$S"

	echo changed >"$S/d1/f1.txt"
	rm "$S/d2/f2.txt"
	head -c $((1 << 20)) /dev/urandom >"$S/new.bin"
	check "$label: second backup" "${R[@]}" backup --host suite "$S"
	check "$label: snapshots lists two" bash -c "equals 2 \$($R_CMD snapshots --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')"
	check "$label: check --read-data after second backup" "${R[@]}" check --read-data
	check "$label: restore latest again" "${R[@]}" restore latest --target "$S.restore2"
	check "$label: second restore identical" same_tree "$S" "$S.restore2$S"
	check "$label: forget --prune keeps the last" "${R[@]}" forget --keep-last 1 --prune
	check "$label: check after prune" "${R[@]}" check --read-data
	check "$label: snapshots lists one after forget" bash -c "equals 1 \$($R_CMD snapshots --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')"
}

run_suite plain "restic-$SCHEME-$RANDOM"

V="restic-versioned-$SCHEME-$RANDOM"
check "versioned: create bucket" aws s3api create-bucket --bucket "$V"
check "versioned: enable versioning" aws s3api put-bucket-versioning --bucket "$V" --versioning-configuration Status=Enabled
run_suite versioned "$V"
# What forget --prune deleted (the first snapshot, its packs, restic's
# locks) is hidden behind delete markers; every byte stays as a version.
check "versioned: prune's deletes left delete markers over kept versions" markers_over_versions "$V"
rm -rf "$T"
finish
