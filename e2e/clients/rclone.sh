#!/usr/bin/env bash
# rclone suite: copy, sync, check (hashes), lsf, delete, large multipart.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

# rclone's AWS SDK cannot combine AWS_CA_BUNDLE with its own transport;
# the certificate goes in through --ca-cert instead.
unset AWS_CA_BUNDLE
T=$(mktemp -d "$WORK/rclone.XXXX")
export RCLONE_CONFIG="$T/rclone.conf"
cat >"$RCLONE_CONFIG" <<CONF
[t]
type = s3
provider = Other
access_key_id = $AWS_ACCESS_KEY_ID
secret_access_key = $AWS_SECRET_ACCESS_KEY
endpoint = $ENDPOINT
region = us-east-1
CONF
RC=(rclone --config "$RCLONE_CONFIG" --retries 1 --low-level-retries 1)
[ "$SCHEME" = https ] && RC+=(--ca-cert "$CERT")
export RC_CMD="${RC[*]}"
B="rclone-$SCHEME-$RANDOM"
echo "$(rclone version | head -1)"

check "mkdir bucket" "${RC[@]}" mkdir "t:$B"
make_tree "$T/src" 120
check "copy" "${RC[@]}" copy "$T/src" "t:$B/tree"
check "check (hashes)" "${RC[@]}" check "$T/src" "t:$B/tree"
check "lsf counts 120" bash -c "equals 120 \$($RC_CMD lsf -R --files-only t:$B/tree | wc -l)"
echo changed >"$T/src/d1/f1.txt"
rm "$T/src/d2/f2.txt"
check "sync" "${RC[@]}" sync "$T/src" "t:$B/tree"
check "check after sync" "${RC[@]}" check "$T/src" "t:$B/tree"
check "sync removed the deleted file" bash -c "equals 119 \$($RC_CMD lsf -R --files-only t:$B/tree | wc -l)"
check "lsf --s3-versions (ListObjectVersions) counts 119" bash -c "equals 119 \$($RC_CMD lsf -R --files-only --s3-versions t:$B/tree | wc -l)"
VB="$B-ver"
check "versioned bucket: mkdir" "${RC[@]}" mkdir "t:$VB"
check "backend versioning Enabled" bash -c "$RC_CMD backend versioning t:$VB Enabled | grep -qx Enabled"
check "backend versioning reads Enabled" bash -c "$RC_CMD backend versioning t:$VB | grep -qx Enabled"
echo one >"$T/v.txt"
check "versioned copy 1" "${RC[@]}" copyto "$T/v.txt" "t:$VB/v.txt"
echo two >"$T/v.txt"
check "versioned copy 2" "${RC[@]}" copyto "$T/v.txt" "t:$VB/v.txt"
check "lsf --s3-versions shows the old version" bash -c "equals 2 \$($RC_CMD lsf --s3-versions t:$VB | wc -l)"
check "cat reads the latest" bash -c "equals two \$($RC_CMD cat t:$VB/v.txt)"
check "old version reads back" bash -c "equals one \$($RC_CMD cat --s3-versions t:$VB/\$($RC_CMD lsf --s3-versions t:$VB | grep -v '^v.txt$'))"
check "purge the versioned bucket (every version)" "${RC[@]}" purge --s3-versions "t:$VB"
check "copy back down" "${RC[@]}" copy "t:$B/tree" "$T/down"
check "down tree identical" same_tree "$T/src" "$T/down"
mkdir -p "$T/bigdir"
head -c $((48 << 20)) /dev/urandom >"$T/large"
cp "$T/large" "$T/bigdir/large.bin"
check "large file multipart (5 MiB chunks)" "${RC[@]}" copyto --s3-upload-cutoff 5M --s3-chunk-size 5M "$T/large" "t:$B/large.bin"
check "large file check" "${RC[@]}" check "$T/bigdir" "t:$B" --include large.bin
check "large file cat identical" bash -c "$RC_CMD cat t:$B/large.bin | cmp - $T/large"
check "md5sum works on multipart object (stored md5)" bash -c "equals \$(md5sum <$T/large | cut -d' ' -f1) \$($RC_CMD md5sum t:$B/large.bin | cut -d' ' -f1)"
check "server-side copy" "${RC[@]}" copyto "t:$B/large.bin" "t:$B/large.copy"
check "delete" "${RC[@]}" delete "t:$B"
check "nothing left" bash -c "equals 0 \$($RC_CMD lsf -R t:$B | wc -l)"
check "rmdir bucket" "${RC[@]}" rmdir "t:$B"
rm -rf "$T"
finish
