#!/usr/bin/env bash
# aws-cli suite: what users of `aws s3` and `aws s3api` run. Needs ENDPOINT,
# AWS credentials, AWS (the aws binary) and WORK; SCHEME=https also AWS_CA_BUNDLE.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

VER=$("$AWS" --version 2>&1 | sed -n 's#^aws-cli/\([0-9]*\)\..*#\1#p')
B="awscli-v$VER-$SCHEME-$RANDOM"
T=$(mktemp -d "$WORK/awscli.XXXX")
aws() { "$AWS" --endpoint-url "$ENDPOINT" "$@"; }
echo "aws-cli $("$AWS" --version 2>&1)"

# etag_parts KEY N: KEY's ETag ends in -N, or has no part count when N is 0.
etag_parts() {
	local e
	e=$("$AWS" --endpoint-url "$ENDPOINT" s3api head-object --bucket "$B" --key "$1" --query ETag --output text) || return 1
	e=${e//\"/}
	if [ "$2" = 0 ]; then [[ $e != *-* ]]; else [[ $e == *-"$2" ]]; fi || { echo "ETag $e, want $2 parts"; return 1; }
}

check "s3 mb" aws s3 mb "s3://$B"
check "s3 mb twice (us-east-1 answers 200, as S3)" aws s3 mb "s3://$B"

# Large objects both ways with the default settings: `s3 cp` uploads above
# 8 MiB in 8 MiB parts and downloads above 8 MiB in ranged GETs of 8 MiB.
# "one PUT" raises only multipart_threshold, and only for the upload.
cat >"$T/one-put.cfg" <<CFG
[default]
s3 =
    multipart_threshold = 1GB
CFG
for mib in 20 200; do
	head -c $((mib << 20)) /dev/urandom >"$T/big"
	parts=$(( (mib + 7) / 8 ))
	check "s3 cp up ${mib}MiB, one PUT" env AWS_CONFIG_FILE="$T/one-put.cfg" "$AWS" --endpoint-url "$ENDPOINT" \
		s3 cp --only-show-errors "$T/big" "s3://$B/big/$mib-one.bin"
	check "${mib}MiB one-PUT ETag has no part count" etag_parts "big/$mib-one.bin" 0
	check "s3 cp up ${mib}MiB, multipart (default)" aws s3 cp --only-show-errors "$T/big" "s3://$B/big/$mib-multi.bin"
	check "${mib}MiB multipart ETag has $parts parts" etag_parts "big/$mib-multi.bin" "$parts"
	for how in one multi; do
		what=$([ $how = one ] && echo "one-PUT" || echo "multipart")
		rm -f "$T/big.down"
		# --no-progress, not --only-show-errors: a warning (exit 2) shows.
		check "s3 cp down ${mib}MiB $what object, default (ranged GETs)" aws s3 cp --no-progress "s3://$B/big/$mib-$how.bin" "$T/big.down"
		check "${mib}MiB $what round trip identical" same "$T/big" "$T/big.down"
	done
	check "s3 rm ${mib}MiB objects" aws s3 rm --only-show-errors --recursive "s3://$B/big/"
done
rm -f "$T/big" "$T/big.down"

make_tree "$T/tree" 500
check "s3 sync up 500 files" aws s3 sync --only-show-errors "$T/tree" "s3://$B/tree"
check "s3 ls --recursive counts 500" bash -c "equals 500 \$(\"$AWS\" --endpoint-url $ENDPOINT s3 ls --recursive s3://$B/tree/ | wc -l)"
check "s3 sync down 500 files" aws s3 sync --only-show-errors "s3://$B/tree" "$T/tree.down"
check "sync round trip identical" same_tree "$T/tree" "$T/tree.down"
check "s3 sync again uploads nothing" bash -c "test -z \"\$(\"$AWS\" --endpoint-url $ENDPOINT s3 sync $T/tree s3://$B/tree)\""

check "list-objects-v2 page of 100" bash -c "
	out=\$(\"$AWS\" --endpoint-url $ENDPOINT s3api list-objects-v2 --bucket $B --prefix tree/ --max-keys 100 --no-paginate --output json)
	echo \"\$out\" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[\"IsTruncated\"] and d[\"NextContinuationToken\"] and len(d[\"Contents\"])==100, d.keys()'"
check "list-objects-v2 paginated (page-size 73) sees 500" bash -c "equals 500 \$(\"$AWS\" --endpoint-url $ENDPOINT s3api list-objects-v2 --bucket $B --prefix tree/ --page-size 73 --query 'Contents[].Key' --output text | wc -w)"
check "list-objects v1 paginated sees 500" bash -c "equals 500 \$(\"$AWS\" --endpoint-url $ENDPOINT s3api list-objects --bucket $B --prefix tree/ --page-size 111 --query 'Contents[].Key' --output text | wc -w)"
check "list-object-versions paginated (page-size 73) sees 500 null versions" bash -c "equals 500 \$(\"$AWS\" --endpoint-url $ENDPOINT s3api list-object-versions --bucket $B --prefix tree/ --page-size 73 --query 'Versions[].VersionId' --output text | grep -ow null | wc -l)"
check "delimiter lists 7 prefixes" bash -c "equals 7 \$(\"$AWS\" --endpoint-url $ENDPOINT s3api list-objects-v2 --bucket $B --prefix tree/ --delimiter / --query 'length(CommonPrefixes)' --output text)"

printf 'hello presign\n' >"$T/small"
check "s3 cp small" aws s3 cp --only-show-errors "$T/small" "s3://$B/small.txt"
check "s3 presign + curl" bash -c "url=\$(\"$AWS\" --endpoint-url $ENDPOINT s3 presign s3://$B/small.txt --expires-in 300) && curl -sSf $(curl_opts) \"\$url\" | cmp - $T/small"
check "presign of missing key gives 404" bash -c "url=\$(\"$AWS\" --endpoint-url $ENDPOINT s3 presign s3://$B/missing --expires-in 300) && test \$(curl -s -o /dev/null -w '%{http_code}' $(curl_opts) \"\$url\") = 404"

check "s3api put-object --checksum-algorithm CRC32" aws s3api put-object --bucket "$B" --key crc.txt --body "$T/small" --checksum-algorithm CRC32
CRC=$(python3 -c 'import zlib,base64,sys; print(base64.b64encode(zlib.crc32(open(sys.argv[1],"rb").read()).to_bytes(4,"big")).decode())' "$T/small")
check "head-object --checksum-mode ENABLED returns CRC32" bash -c "equals $CRC \$(\"$AWS\" --endpoint-url $ENDPOINT s3api head-object --bucket $B --key crc.txt --checksum-mode ENABLED --query ChecksumCRC32 --output text)"
check "s3api head-object size" bash -c "equals \$(stat -c %s $T/small) \$(\"$AWS\" --endpoint-url $ENDPOINT s3api head-object --bucket $B --key small.txt --query ContentLength --output text)"
check "put-object keeps metadata and headers" aws s3api put-object --bucket "$B" --key meta.txt --body "$T/small" \
	--metadata color=blue --cache-control max-age=60 --content-disposition 'attachment; filename="x.txt"' --content-type text/plain
check "head-object returns metadata" bash -c "\"$AWS\" --endpoint-url $ENDPOINT s3api head-object --bucket $B --key meta.txt --output json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[\"Metadata\"]=={\"color\":\"blue\"} and d[\"CacheControl\"]==\"max-age=60\" and d[\"ContentType\"]==\"text/plain\", d'"
expect_fail "head-object missing is 404" "404\|Not Found" aws s3api head-object --bucket "$B" --key nope
expect_fail "get-object missing is NoSuchKey" "NoSuchKey" aws s3api get-object --bucket "$B" --key nope "$T/nope"

if "$AWS" s3api put-object help 2>/dev/null | grep -q -- "--if-none-match"; then
	check "conditional put creates" aws s3api put-object --bucket "$B" --key cond.txt --body "$T/small" --if-none-match '*'
	expect_fail "conditional put refuses overwrite" "PreconditionFailed" aws s3api put-object --bucket "$B" --key cond.txt --body "$T/small" --if-none-match '*'
else
	echo "skip conditional put: this aws-cli has no --if-none-match"
fi
check "copy-object" aws s3api copy-object --bucket "$B" --key copy.txt --copy-source "$B/small.txt"
check "s3 cp s3->s3 copy identical" bash -c "\"$AWS\" --endpoint-url $ENDPOINT s3 cp s3://$B/copy.txt - | cmp - $T/small"
check "put-object-tagging" aws s3api put-object-tagging --bucket "$B" --key small.txt --tagging 'TagSet=[{Key=k,Value=v}]'
check "get-object-tagging" bash -c "equals k=v \$(\"$AWS\" --endpoint-url $ENDPOINT s3api get-object-tagging --bucket $B --key small.txt --query 'TagSet[0].[Key,Value]' --output text | tr '\t' =)"
check "get-bucket-location" aws s3api get-bucket-location --bucket "$B"
check "get-bucket-versioning" aws s3api get-bucket-versioning --bucket "$B"
check "list-multipart-uploads" aws s3api list-multipart-uploads --bucket "$B"
LC='{"Rules":[{"ID":"logs","Status":"Enabled","Filter":{"Prefix":"logs/"},"Expiration":{"Days":30}},{"ID":"uploads","Status":"Enabled","Filter":{"Prefix":""},"AbortIncompleteMultipartUpload":{"DaysAfterInitiation":7}}]}'
check "put-bucket-lifecycle-configuration" aws s3api put-bucket-lifecycle-configuration --bucket "$B" --lifecycle-configuration "$LC"
check "get-bucket-lifecycle-configuration" bash -c "equals 30 \$(\"$AWS\" --endpoint-url $ENDPOINT s3api get-bucket-lifecycle-configuration --bucket $B --query 'Rules[?ID==\`logs\`].Expiration.Days' --output text)"
expect_fail "lifecycle rule without an action is InvalidRequest" "InvalidRequest" aws s3api put-bucket-lifecycle-configuration --bucket "$B" --lifecycle-configuration '{"Rules":[{"ID":"x","Status":"Enabled","Filter":{"Prefix":""}}]}'
check "delete-bucket-lifecycle" aws s3api delete-bucket-lifecycle --bucket "$B"
expect_fail "no lifecycle is NoSuchLifecycleConfiguration" "NoSuchLifecycleConfiguration" aws s3api get-bucket-lifecycle-configuration --bucket "$B"

VB="$B-ver"
check "versioned bucket: s3 mb" aws s3 mb "s3://$VB"
check "put-bucket-versioning Enabled" aws s3api put-bucket-versioning --bucket "$VB" --versioning-configuration Status=Enabled
check "get-bucket-versioning reads Enabled" bash -c "equals Enabled \$(\"$AWS\" --endpoint-url $ENDPOINT s3api get-bucket-versioning --bucket $VB --query Status --output text)"
for i in 1 2 3; do
	echo "version $i" >"$T/v$i"
	check "put-object version $i" aws s3api put-object --bucket "$VB" --key k --body "$T/v$i"
done
check "delete-object writes a delete marker" bash -c "equals True \$(\"$AWS\" --endpoint-url $ENDPOINT s3api delete-object --bucket $VB --key k --query DeleteMarker --output text)"
# Text output prints "None" for a page without the queried list; only
# version IDs are counted.
check "list-object-versions paginated (page-size 1) sees 3 versions" bash -c "equals 3 \$(\"$AWS\" --endpoint-url $ENDPOINT s3api list-object-versions --bucket $VB --page-size 1 --query 'Versions[].VersionId' --output text | grep -ow '[0-9a-f]\\{24\\}' | wc -l)"
check "list-object-versions paginated (page-size 1) sees 1 delete marker" bash -c "equals 1 \$(\"$AWS\" --endpoint-url $ENDPOINT s3api list-object-versions --bucket $VB --page-size 1 --query 'DeleteMarkers[].VersionId' --output text | grep -ow '[0-9a-f]\\{24\\}' | wc -l)"
check "get-object --version-id reads the oldest version" bash -c "
	id=\$(\"$AWS\" --endpoint-url $ENDPOINT s3api list-object-versions --bucket $VB --query 'Versions[-1].VersionId' --output text) &&
	\"$AWS\" --endpoint-url $ENDPOINT s3api get-object --bucket $VB --key k --version-id \$id $T/v.down >/dev/null && cmp $T/v1 $T/v.down"
check "delete every version by ID" bash -c "
	\"$AWS\" --endpoint-url $ENDPOINT s3api list-object-versions --bucket $VB --query '[Versions[].VersionId, DeleteMarkers[].VersionId][]' --output text | tr '\t' '\n' |
	while read -r id; do \"$AWS\" --endpoint-url $ENDPOINT s3api delete-object --bucket $VB --key k --version-id \$id >/dev/null || exit 1; done"
check "versioned bucket: s3 rb" aws s3 rb "s3://$VB"

LB="$B-lock"
check "object lock: create-bucket --object-lock-enabled-for-bucket" aws s3api create-bucket --bucket "$LB" --object-lock-enabled-for-bucket
echo locked >"$T/locked"
LV=$("$AWS" --endpoint-url "$ENDPOINT" s3api put-object --bucket "$LB" --key k --body "$T/locked" --query VersionId --output text)
UNTIL=$(date -u -d '+1 hour' +%Y-%m-%dT%H:%M:%SZ)
check "put-object-retention GOVERNANCE" aws s3api put-object-retention --bucket "$LB" --key k --version-id "$LV" \
	--retention "Mode=GOVERNANCE,RetainUntilDate=$UNTIL"
check "get-object-retention reads GOVERNANCE" bash -c "equals GOVERNANCE \$(\"$AWS\" --endpoint-url $ENDPOINT s3api get-object-retention --bucket $LB --key k --version-id $LV --query Retention.Mode --output text)"
check "put-object-legal-hold ON" aws s3api put-object-legal-hold --bucket "$LB" --key k --version-id "$LV" --legal-hold Status=ON
check "get-object-legal-hold reads ON" bash -c "equals ON \$(\"$AWS\" --endpoint-url $ENDPOINT s3api get-object-legal-hold --bucket $LB --key k --version-id $LV --query LegalHold.Status --output text)"
expect_fail "delete of a version under a legal hold is AccessDenied" "AccessDenied" aws s3api delete-object --bucket "$LB" --key k --version-id "$LV" --bypass-governance-retention
check "put-object-legal-hold OFF" aws s3api put-object-legal-hold --bucket "$LB" --key k --version-id "$LV" --legal-hold Status=OFF
expect_fail "delete under governance without the bypass is AccessDenied" "AccessDenied" aws s3api delete-object --bucket "$LB" --key k --version-id "$LV"
check "delete under governance with --bypass-governance-retention" aws s3api delete-object --bucket "$LB" --key k --version-id "$LV" --bypass-governance-retention
check "object lock bucket: s3 rb" aws s3 rb "s3://$LB"

check "s3 rm --recursive" aws s3 rm --only-show-errors --recursive "s3://$B"
check "bucket is empty" bash -c "equals 0 \$(\"$AWS\" --endpoint-url $ENDPOINT s3 ls --recursive s3://$B | wc -l)"
check "s3 rb" aws s3 rb "s3://$B"
expect_fail "ls of removed bucket is NoSuchBucket" "NoSuchBucket" aws s3 ls "s3://$B"
rm -rf "$T"
finish
