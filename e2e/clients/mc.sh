#!/usr/bin/env bash
# mc (MinIO Client) suite: alias set, mb, cp both ways (small, and large
# enough for multipart), mirror a tree up and down, ls --recursive,
# rm --recursive --force, rb. Needs MC (the mc binary), ENDPOINT, AWS
# credentials and WORK; SCHEME=https also CERT. mc keeps its aliases in a
# config dir of its own and trusts the CAs in <config-dir>/certs/CAs/.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

T=$(mktemp -d "$WORK/mc.XXXX")
CFG="$T/config"
mkdir -p "$CFG/certs/CAs"
[ "$SCHEME" = https ] && cp "$CERT" "$CFG/certs/CAs/tessera.crt"
# A build from source has no release tag and so never looks for updates;
# MC_UPDATE=off says the same for any other build.
export MC_UPDATE=off
mc() { "$MC" --config-dir "$CFG" --no-color --disable-pager "$@"; }
export -f mc
export MC CFG
B="mc-$SCHEME-$RANDOM"
echo "$("$MC" --version 2>&1 | head -1), github.com/minio/mc ${MC_VERSION:-(version unknown)}"

# etag_of OBJECT: the ETag `mc stat` reports, without quotes.
etag_of() { mc stat --json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["etag"].strip("\""))'; }
export -f etag_of

check "alias set" mc alias set t "$ENDPOINT" "$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY"
check "alias ls shows the endpoint" bash -c "mc alias ls t | grep -qF '$ENDPOINT'"
check "mb" mc mb "t/$B"

printf 'hello mc\n' >"$T/small"
check "cp small up" mc cp "$T/small" "t/$B/dir/small.txt"
check "cp small down" mc cp "t/$B/dir/small.txt" "$T/small.down"
check "small identical" same "$T/small" "$T/small.down"
check "cat small" bash -c "mc cat t/$B/dir/small.txt | cmp - $T/small"
# S3 answers re-creating your own bucket in us-east-1 with 200, changing nothing.
check "mb again (us-east-1 answers 200, as S3)" mc mb "t/$B"
check "bucket kept its object" bash -c "mc cat t/$B/dir/small.txt | cmp - $T/small"

# mc (minio-go) switches to multipart above 16 MiB, in 16 MiB parts.
head -c $((30 << 20)) /dev/urandom >"$T/large"
check "cp 30MiB up (multipart)" mc cp "$T/large" "t/$B/large.bin"
check "30MiB ETag has 2 parts" bash -c "etag=\$(etag_of t/$B/large.bin) && [[ \$etag == *-2 ]] || { echo \"ETag \$etag\"; false; }"
check "cp 30MiB down" mc cp "t/$B/large.bin" "$T/large.down"
check "30MiB identical" same "$T/large" "$T/large.down"
rm -f "$T/large" "$T/large.down"

make_tree "$T/tree" 150
head -c $((3 << 20)) /dev/urandom >"$T/tree/d3/blob.bin"
: >"$T/tree/d4/empty"
check "mirror up" mc mirror "$T/tree" "t/$B/tree"
check "ls --recursive counts 152" bash -c "equals 152 \$(mc ls --recursive t/$B/tree | wc -l)"
check "ls --recursive of the bucket lists every key" bash -c "mc ls --recursive t/$B | grep -q 'dir/small.txt' && mc ls --recursive t/$B | grep -q 'large.bin' && mc ls --recursive t/$B | grep -q 'tree/d3/blob.bin'"
check "mirror down" mc mirror "t/$B/tree" "$T/tree.down"
check "mirror round trip identical" same_tree "$T/tree" "$T/tree.down"
echo changed >"$T/tree/d1/f1.txt"
rm "$T/tree/d2/f2.txt"
check "mirror --overwrite --remove up" mc mirror --overwrite --remove "$T/tree" "t/$B/tree"
check "mirror removed the deleted file" bash -c "equals 151 \$(mc ls --recursive t/$B/tree | wc -l)"
rm -rf "$T/tree.down"
check "mirror down again" mc mirror "t/$B/tree" "$T/tree.down"
check "changed tree identical" same_tree "$T/tree" "$T/tree.down"

check "rm --recursive --force" mc rm --recursive --force "t/$B"
check "bucket is empty" bash -c "equals 0 \$(mc ls --recursive t/$B | wc -l)"
expect_fail "cat of removed object fails" "does not exist\|NoSuchKey\|Object does not exist" mc cat "t/$B/dir/small.txt"
check "rb" mc rb "t/$B"
expect_fail "ls of removed bucket fails" "does not exist\|NoSuchBucket" mc ls "t/$B"
rm -rf "$T"
finish
