#!/usr/bin/env bash
# s3cmd suite: mb, put, get, ls, del, sync, multipart put. The config holds
# only what `s3cmd --configure` asks a new user for, so everything else is
# s3cmd's default; S3CMD_LOCATION is its "Default Region", US unless set
# (s3cmd signs for region "US" until S3 names the right one).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

LOCATION=${S3CMD_LOCATION:-US}

T=$(mktemp -d "$WORK/s3cmd.XXXX")
HOSTPORT=${ENDPOINT#*://}
cat >"$T/s3cfg" <<CONF
[default]
access_key = $AWS_ACCESS_KEY_ID
secret_key = $AWS_SECRET_ACCESS_KEY
host_base = $HOSTPORT
host_bucket = $HOSTPORT
bucket_location = $LOCATION
use_https = $([ "$SCHEME" = https ] && echo True || echo False)
ca_certs_file = $([ "$SCHEME" = https ] && echo "$CERT")
CONF
S3=(s3cmd -c "$T/s3cfg")
export S3_CMD="${S3[*]}"
B="s3cmd-$(echo "$LOCATION" | tr A-Z a-z)-$SCHEME-$RANDOM"
echo "$(s3cmd --version), bucket_location = $LOCATION"

check "mb" "${S3[@]}" mb "s3://$B"
printf 'hello s3cmd\n' >"$T/small"
check "put" "${S3[@]}" put "$T/small" "s3://$B/dir/small.txt"
check "get" "${S3[@]}" get "s3://$B/dir/small.txt" "$T/small.down"
check "get identical" same "$T/small" "$T/small.down"
check "ls" bash -c "$S3_CMD ls s3://$B/dir/ | grep -q small.txt"
check "ls -r (la)" bash -c "$S3_CMD ls -r s3://$B | grep -q dir/small.txt"
check "info" bash -c "$S3_CMD info s3://$B/dir/small.txt | grep -q MD5"
head -c $((33 << 20)) /dev/urandom >"$T/large"
check "multipart put (15 MiB chunks)" "${S3[@]}" put --multipart-chunk-size-mb=15 "$T/large" "s3://$B/large.bin"
check "multipart get" "${S3[@]}" get "s3://$B/large.bin" "$T/large.down"
check "multipart identical" same "$T/large" "$T/large.down"
make_tree "$T/tree" 60
check "sync up" "${S3[@]}" sync "$T/tree/" "s3://$B/tree/"
check "sync down" "${S3[@]}" sync "s3://$B/tree/" "$T/tree.down/"
check "sync identical" same_tree "$T/tree" "$T/tree.down"
check "cp server-side" "${S3[@]}" cp "s3://$B/dir/small.txt" "s3://$B/dir/copy.txt"
check "del" "${S3[@]}" del "s3://$B/dir/small.txt"
expect_fail "get of deleted fails" "404\|NoSuchKey\|not exist" "${S3[@]}" get "s3://$B/dir/small.txt" "$T/gone"
check "del recursive" "${S3[@]}" del --recursive --force "s3://$B"
check "rb" "${S3[@]}" rb "s3://$B"
rm -rf "$T"
finish
