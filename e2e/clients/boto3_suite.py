"""boto3 suite: what boto3 users run, against ENDPOINT with the AWS_* keys.

Runs under any boto3 generation (Debian's 1.26 and pip's 1.43+, which sends
CRC32 checksums in aws-chunked trailers by default). Plain script: prints
one line per check and "N passed, M failed"; exits non-zero on failure.
"""
import hashlib
import io
import os
import random
import shutil
import sys
import tempfile
import traceback
import urllib.request
import ssl
import uuid

import boto3
import botocore
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from botocore.exceptions import ClientError

ENDPOINT = os.environ["ENDPOINT"]
CERT = os.environ.get("CERT") if ENDPOINT.startswith("https") else None
results = {"passed": 0, "failed": 0}


def client(**cfg):
    return boto3.client("s3", endpoint_url=ENDPOINT, region_name="us-east-1",
                        verify=CERT if CERT else None, config=Config(**cfg))


def check(name):
    def run(fn):
        try:
            fn()
            results["passed"] += 1
            print("ok  ", name, flush=True)
        except Exception:
            results["failed"] += 1
            print("FAIL", name, flush=True)
            traceback.print_exc(limit=4)
        return fn
    return run


def error_code(fn):
    try:
        fn()
    except ClientError as e:
        return e.response["Error"]["Code"], e.response["ResponseMetadata"]["HTTPStatusCode"]
    raise AssertionError("expected a ClientError")


def fetch(url, method="GET", data=None, headers=None):
    ctx = ssl.create_default_context(cafile=CERT) if CERT else None
    req = urllib.request.Request(url, method=method, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(req, context=ctx) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


s3 = client()
B = "boto3-%s-%s" % (boto3.__version__.replace(".", "-"), uuid.uuid4().hex[:8])
print("boto3", boto3.__version__, "botocore", botocore.__version__, "endpoint", ENDPOINT)
tmp = tempfile.mkdtemp(dir=os.environ.get("WORK"))


@check("create_bucket / head_bucket")
def _():
    s3.create_bucket(Bucket=B)
    s3.head_bucket(Bucket=B)


@check("put_object / get_object round trip")
def _():
    body = os.urandom(100_000)
    s3.put_object(Bucket=B, Key="a/b.bin", Body=body, Metadata={"k": "v"}, ContentType="application/x-test")
    got = s3.get_object(Bucket=B, Key="a/b.bin")
    assert got["Body"].read() == body
    assert got["Metadata"] == {"k": "v"}, got["Metadata"]
    assert got["ContentType"] == "application/x-test"


@check("upload_file / download_file multipart (TransferConfig 5 MiB parts)")
def _():
    src = os.path.join(tmp, "big")
    data = os.urandom(23 * 1024 * 1024 + 123)
    with open(src, "wb") as f:
        f.write(data)
    tc = TransferConfig(multipart_threshold=5 << 20, multipart_chunksize=5 << 20, max_concurrency=4)
    s3.upload_file(src, B, "big.bin", Config=tc)
    head = s3.head_object(Bucket=B, Key="big.bin")
    assert head["ContentLength"] == len(data)
    assert head["ETag"].strip('"').endswith("-5"), head["ETag"]
    dst = os.path.join(tmp, "big.down")
    s3.download_file(B, "big.bin", dst, Config=tc)
    with open(dst, "rb") as f:
        assert hashlib.sha256(f.read()).digest() == hashlib.sha256(data).digest()


def random_file(path, size):
    """Writes size random bytes to path; returns their sha256."""
    h = hashlib.sha256()
    with open(path, "wb") as f:
        left = size
        while left:
            chunk = os.urandom(min(left, 8 << 20))
            f.write(chunk)
            h.update(chunk)
            left -= len(chunk)
    return h.hexdigest()


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(8 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# Large objects with every setting at its default: upload_file's default
# TransferConfig writes 8 MiB parts above 8 MiB, and download_file reads
# anything above 8 MiB in ranged GETs of 8 MiB, each checked by botocore
# >= 1.36 against whatever x-amz-checksum-* header the response carries.
# "one PUT" raises only the threshold, so upload_file sends one PutObject.
ONE_PUT = TransferConfig(multipart_threshold=1 << 40)
for mib in (20, 200):
    src = os.path.join(tmp, "large-%d" % mib)
    digest = random_file(src, mib << 20)
    for mode, cfg in (("one PUT", ONE_PUT), ("multipart", None)):
        key = "large/%d-%s" % (mib, mode.replace(" ", "-"))
        parts = -(-mib // 8)

        @check("upload_file %d MiB, %s" % (mib, mode))
        def _():
            if cfg is None:
                s3.upload_file(src, B, key)
            else:
                s3.upload_file(src, B, key, Config=cfg)
            etag = s3.head_object(Bucket=B, Key=key)["ETag"].strip('"')
            want = "" if cfg is not None else "-%d" % parts
            assert ("-" in etag) == bool(want) and etag.endswith(want), (etag, want)

        @check("download_file %d MiB written by %s, defaults (ranged GETs), sha256" % (mib, mode))
        def _():
            dst = src + ".down"
            s3.download_file(B, key, dst)
            try:
                assert sha256_file(dst) == digest
            finally:
                os.remove(dst)

        if mib == 20:
            @check("get_object Range + ChecksumMode=ENABLED, %d MiB written by %s" % (mib, mode))
            def _():
                first, last = (9 << 20) - 7, (17 << 20) + 5
                got = s3.get_object(Bucket=B, Key=key, Range="bytes=%d-%d" % (first, last), ChecksumMode="ENABLED")
                body = got["Body"].read()
                with open(src, "rb") as f:
                    f.seek(first)
                    want = f.read(last - first + 1)
                assert got["ContentRange"] == "bytes %d-%d/%d" % (first, last, mib << 20), got["ContentRange"]
                assert body == want
        s3.delete_object(Bucket=B, Key=key)
    os.remove(src)


@check("get_object Range + ChecksumMode=ENABLED of an object put with CRC32")
def _():
    data = os.urandom(3 << 20)
    s3.put_object(Bucket=B, Key="crc32-range", Body=data, ChecksumAlgorithm="CRC32")
    whole = s3.get_object(Bucket=B, Key="crc32-range", ChecksumMode="ENABLED")
    assert whole["Body"].read() == data and whole.get("ChecksumCRC32"), whole.get("ChecksumCRC32")
    got = s3.get_object(Bucket=B, Key="crc32-range", Range="bytes=1000-1049575", ChecksumMode="ENABLED")
    assert got["Body"].read() == data[1000:1049576]
    got = s3.get_object(Bucket=B, Key="crc32-range", Range="bytes=-4096", ChecksumMode="ENABLED")
    assert got["Body"].read() == data[-4096:]


@check("response-* overrides, plain and presigned")
def _():
    g = s3.get_object(Bucket=B, Key="a/b.bin", ResponseContentType="text/x-over", ResponseContentDisposition="attachment; filename=x.bin")
    assert g["ContentType"] == "text/x-over" and g["ContentDisposition"] == "attachment; filename=x.bin", g
    url = s3.generate_presigned_url("get_object", Params={"Bucket": B, "Key": "a/b.bin", "ResponseCacheControl": "no-store"}, ExpiresIn=60)
    ctx = ssl.create_default_context(cafile=CERT) if CERT else None
    with urllib.request.urlopen(url, context=ctx) as r:
        assert r.headers["Cache-Control"] == "no-store", dict(r.headers)


@check("ranged get")
def _():
    got = s3.get_object(Bucket=B, Key="a/b.bin", Range="bytes=10-19")
    assert got["ContentLength"] == 10 and got["ContentRange"].startswith("bytes 10-19/")


@check("paginators list_objects_v2 and list_objects")
def _():
    for i in range(37):
        s3.put_object(Bucket=B, Key="page/%03d" % i, Body=b"x%d" % i)
    for op in ("list_objects_v2", "list_objects"):
        keys = []
        for page in s3.get_paginator(op).paginate(Bucket=B, Prefix="page/", PaginationConfig={"PageSize": 10}):
            keys += [o["Key"] for o in page.get("Contents", [])]
        assert keys == ["page/%03d" % i for i in range(37)], (op, keys)
    pages = list(s3.get_paginator("list_objects_v2").paginate(Bucket=B, Delimiter="/"))
    prefixes = [p["Prefix"] for pg in pages for p in pg.get("CommonPrefixes", [])]
    assert prefixes == ["a/", "page/"], prefixes


@check("keys needing url encoding list back intact")
def _():
    weird = ["sp ace", "plus+sign", "ünï/cödé", "q?mark", "pct%41", "amp&x=y"]
    for k in weird:
        s3.put_object(Bucket=B, Key="w/" + k, Body=b"1")
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=B, Prefix="w/")["Contents"]]
    assert sorted(keys) == sorted("w/" + k for k in weird), keys
    keys = [o["Key"] for o in s3.list_objects(Bucket=B, Prefix="w/")["Contents"]]
    assert sorted(keys) == sorted("w/" + k for k in weird), keys


@check("copy (managed) and copy_object")
def _():
    s3.copy({"Bucket": B, "Key": "big.bin"}, B, "big.copy")
    assert s3.head_object(Bucket=B, Key="big.copy")["ContentLength"] == s3.head_object(Bucket=B, Key="big.bin")["ContentLength"]
    s3.copy_object(Bucket=B, Key="b.copy", CopySource={"Bucket": B, "Key": "a/b.bin"},
                   MetadataDirective="REPLACE", Metadata={"new": "1"}, ContentType="text/x-new")
    h = s3.head_object(Bucket=B, Key="b.copy")
    assert h["Metadata"] == {"new": "1"} and h["ContentType"] == "text/x-new", h


@check("delete_objects")
def _():
    objs = [{"Key": "page/%03d" % i} for i in range(37)] + [{"Key": "never-existed"}]
    out = s3.delete_objects(Bucket=B, Delete={"Objects": objs})
    assert len(out.get("Deleted", [])) == 38 and not out.get("Errors"), out
    assert "Contents" not in s3.list_objects_v2(Bucket=B, Prefix="page/")


@check("presigned GET, default signer")
def _():
    url = s3.generate_presigned_url("get_object", Params={"Bucket": B, "Key": "a/b.bin"}, ExpiresIn=300)
    status, body = fetch(url)
    assert status == 200 and body == s3.get_object(Bucket=B, Key="a/b.bin")["Body"].read(), (status, url)


@check("presigned GET, SigV2 ('s3' signer)")
def _():
    c = client(signature_version="s3")
    url = c.generate_presigned_url("get_object", Params={"Bucket": B, "Key": "a/b.bin"}, ExpiresIn=300)
    assert "Signature=" in url and "AWSAccessKeyId=" in url, url
    status, _ = fetch(url)
    assert status == 200, status


@check("presigned GET and PUT, s3v4")
def _():
    c = client(signature_version="s3v4")
    put = c.generate_presigned_url("put_object", Params={"Bucket": B, "Key": "presigned-put"}, ExpiresIn=300)
    status, _ = fetch(put, method="PUT", data=b"via presigned put")
    assert status == 200, status
    url = c.generate_presigned_url("get_object", Params={"Bucket": B, "Key": "presigned-put"}, ExpiresIn=300)
    status, body = fetch(url)
    assert status == 200 and body == b"via presigned put", (status, body)


@check("presigned GET with tampered signature is refused")
def _():
    url = s3.generate_presigned_url("get_object", Params={"Bucket": B, "Key": "a/b.bin"}, ExpiresIn=300)
    status, body = fetch(url.replace("Signature=", "Signature=00"))
    assert status == 403, status


@check("presigned POST (browser form upload)")
def _():
    post = s3.generate_presigned_post(B, "posted/${filename}", ExpiresIn=300,
                                      Conditions=[["content-length-range", 1, 1000]])
    boundary = uuid.uuid4().hex
    parts = []
    for k, v in post["fields"].items():
        parts.append('--%s\r\nContent-Disposition: form-data; name="%s"\r\n\r\n%s\r\n' % (boundary, k, v))
    body = "".join(parts).encode() + (
        '--%s\r\nContent-Disposition: form-data; name="file"; filename="hello.txt"\r\n'
        'Content-Type: text/plain\r\n\r\n' % boundary).encode() + b"posted body" + ("\r\n--%s--\r\n" % boundary).encode()
    status, resp = fetch(post["url"], method="POST", data=body,
                         headers={"Content-Type": "multipart/form-data; boundary=" + boundary})
    assert status in (200, 204), (status, resp)
    assert s3.get_object(Bucket=B, Key="posted/hello.txt")["Body"].read() == b"posted body"


@check("object tagging put/get/delete and x-amz-tagging on put")
def _():
    s3.put_object_tagging(Bucket=B, Key="a/b.bin", Tagging={"TagSet": [{"Key": "t1", "Value": "v1"}, {"Key": "t2", "Value": "v2"}]})
    tags = s3.get_object_tagging(Bucket=B, Key="a/b.bin")["TagSet"]
    assert sorted((t["Key"], t["Value"]) for t in tags) == [("t1", "v1"), ("t2", "v2")], tags
    s3.delete_object_tagging(Bucket=B, Key="a/b.bin")
    assert s3.get_object_tagging(Bucket=B, Key="a/b.bin")["TagSet"] == []
    s3.put_object(Bucket=B, Key="tagged", Body=b"t", Tagging="x=1&y=2")
    tags = s3.get_object_tagging(Bucket=B, Key="tagged")["TagSet"]
    assert sorted((t["Key"], t["Value"]) for t in tags) == [("x", "1"), ("y", "2")], tags


@check("checksums: CRC32 and SHA256 stored and returned with ChecksumMode")
def _():
    s3.put_object(Bucket=B, Key="sum", Body=b"checksummed", ChecksumAlgorithm="SHA256")
    h = s3.head_object(Bucket=B, Key="sum", ChecksumMode="ENABLED")
    import base64
    assert h.get("ChecksumSHA256") == base64.b64encode(hashlib.sha256(b"checksummed").digest()).decode(), h
    g = s3.get_object(Bucket=B, Key="sum", ChecksumMode="ENABLED")
    assert g["Body"].read() == b"checksummed"


@check("PutObject framing: aws-chunked with a CRC32 trailer over https (botocore >= 1.36)")
def _():
    import base64
    import zlib
    seen = {}

    def hook(request, **kw):
        seen.update({k.lower(): (v.decode() if isinstance(v, bytes) else v) for k, v in request.headers.items()})
    c = client()
    c.meta.events.register("before-send.s3.PutObject", hook)
    data = os.urandom(70_000)
    c.put_object(Bucket=B, Key="framed", Body=io.BytesIO(data))
    newer = tuple(int(x) for x in botocore.__version__.split(".")[:2]) >= (1, 36)
    print("     PutObject headers:", {k: v for k, v in seen.items() if k.startswith(("x-amz-", "content-", "transfer-"))
                                     and k not in ("x-amz-date", "x-amz-security-token")})
    if ENDPOINT.startswith("https") and newer:
        assert "aws-chunked" in seen.get("content-encoding", ""), seen
        assert seen.get("x-amz-trailer") == "x-amz-checksum-crc32", seen
    want = base64.b64encode(zlib.crc32(data).to_bytes(4, "big")).decode()
    if newer:
        h = s3.head_object(Bucket=B, Key="framed", ChecksumMode="ENABLED")
        assert h.get("ChecksumCRC32") == want, (h.get("ChecksumCRC32"), want)
    assert s3.get_object(Bucket=B, Key="framed")["Body"].read() == data


@check("ClientError codes")
def _():
    assert error_code(lambda: s3.get_object(Bucket=B, Key="nope")) == ("NoSuchKey", 404)
    assert error_code(lambda: s3.head_object(Bucket=B, Key="nope"))[1] == 404
    assert error_code(lambda: s3.list_objects_v2(Bucket=B + "-missing")) == ("NoSuchBucket", 404)
    # Re-creating your own bucket in us-east-1 is 200, as S3 answers it.
    assert s3.create_bucket(Bucket=B)["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert error_code(lambda: s3.delete_bucket(Bucket=B)) == ("BucketNotEmpty", 409)
    assert error_code(lambda: s3.upload_part(Bucket=B, Key="k", UploadId="bogus", PartNumber=1, Body=b"x")) == ("NoSuchUpload", 404)
    assert error_code(lambda: s3.get_object(Bucket=B, Key="a/b.bin", Range="bytes=999999999-")) == ("InvalidRange", 416)
    assert error_code(lambda: s3.put_object(Bucket=B, Key="badsum", Body=b"payload", ChecksumCRC32="AAAAAA=="))[0] == "BadDigest"
    assert error_code(lambda: s3.put_object(Bucket=B, Key="badsum", Body=b"payload", ContentMD5="1B2M2Y8AsgTpgAmY7PhCfg=="))[0] == "BadDigest"
    assert error_code(lambda: s3.head_object(Bucket=B, Key="badsum"))[1] == 404
    etag = s3.head_object(Bucket=B, Key="a/b.bin")["ETag"]
    assert error_code(lambda: s3.get_object(Bucket=B, Key="a/b.bin", IfMatch='"0000"')) == ("PreconditionFailed", 412)
    assert error_code(lambda: s3.get_object(Bucket=B, Key="a/b.bin", IfNoneMatch=etag))[1] == 304


@check("multipart errors: part too small, wrong order, unknown part; nothing changes")
def _():
    up = s3.create_multipart_upload(Bucket=B, Key="mp")["UploadId"]
    e1 = s3.upload_part(Bucket=B, Key="mp", UploadId=up, PartNumber=1, Body=b"small")["ETag"]
    e2 = s3.upload_part(Bucket=B, Key="mp", UploadId=up, PartNumber=2, Body=b"small")["ETag"]
    uploads = s3.list_multipart_uploads(Bucket=B).get("Uploads", [])
    assert any(u["UploadId"] == up and u["Key"] == "mp" for u in uploads), uploads
    parts = [{"PartNumber": 1, "ETag": e1}, {"PartNumber": 2, "ETag": e2}]
    assert error_code(lambda: s3.complete_multipart_upload(Bucket=B, Key="mp", UploadId=up, MultipartUpload={"Parts": parts}))[0] == "EntityTooSmall"
    assert error_code(lambda: s3.complete_multipart_upload(Bucket=B, Key="mp", UploadId=up, MultipartUpload={"Parts": parts[::-1]}))[0] == "InvalidPartOrder"
    assert error_code(lambda: s3.complete_multipart_upload(Bucket=B, Key="mp", UploadId=up, MultipartUpload={"Parts": [{"PartNumber": 3, "ETag": e1}]}))[0] == "InvalidPart"
    assert error_code(lambda: s3.head_object(Bucket=B, Key="mp"))[1] == 404
    s3.abort_multipart_upload(Bucket=B, Key="mp", UploadId=up)
    assert error_code(lambda: s3.list_parts(Bucket=B, Key="mp", UploadId=up))[0] == "NoSuchUpload"


@check("upload_part_copy")
def _():
    up = s3.create_multipart_upload(Bucket=B, Key="upc")["UploadId"]
    p1 = s3.upload_part_copy(Bucket=B, Key="upc", UploadId=up, PartNumber=1, CopySource={"Bucket": B, "Key": "big.bin"},
                             CopySourceRange="bytes=0-%d" % ((5 << 20) - 1))["CopyPartResult"]["ETag"]
    p2 = s3.upload_part_copy(Bucket=B, Key="upc", UploadId=up, PartNumber=2, CopySource={"Bucket": B, "Key": "a/b.bin"})["CopyPartResult"]["ETag"]
    s3.complete_multipart_upload(Bucket=B, Key="upc", UploadId=up,
                                 MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": p1}, {"PartNumber": 2, "ETag": p2}]})
    got = s3.get_object(Bucket=B, Key="upc")["Body"].read()
    want = s3.get_object(Bucket=B, Key="big.bin", Range="bytes=0-%d" % ((5 << 20) - 1))["Body"].read() + \
        s3.get_object(Bucket=B, Key="a/b.bin")["Body"].read()
    assert got == want


@check("bucket location and versioning")
def _():
    loc = s3.get_bucket_location(Bucket=B)
    assert loc.get("LocationConstraint") in (None, "", "us-east-1"), loc
    v = s3.get_bucket_versioning(Bucket=B)
    assert "Status" not in v, v


@check("list_object_versions paginated; bucket.object_versions.delete() empties a bucket")
def _():
    vb = B + "-v"
    s3.create_bucket(Bucket=vb)
    keys = ["a/1", "a/2", "b", "c d", "e+f"]
    for k in keys:
        s3.put_object(Bucket=vb, Key=k, Body=k.encode())
    seen = []
    for page in s3.get_paginator("list_object_versions").paginate(Bucket=vb, PaginationConfig={"PageSize": 2}):
        assert not page.get("DeleteMarkers"), page
        for v in page.get("Versions", []):
            assert v["VersionId"] == "null" and v["IsLatest"] and v["Size"] == len(v["Key"]), v
            seen.append(v["Key"])
    assert seen == keys, seen
    d = s3.list_object_versions(Bucket=vb, Delimiter="/")
    assert [p["Prefix"] for p in d["CommonPrefixes"]] == ["a/"], d
    res = boto3.resource("s3", endpoint_url=ENDPOINT, region_name="us-east-1", verify=CERT if CERT else None)
    res.Bucket(vb).object_versions.delete()
    assert s3.list_objects_v2(Bucket=vb)["KeyCount"] == 0
    s3.delete_bucket(Bucket=vb)


@check("versioned bucket: versions by ID, a delete marker, paginated versions, object_versions.delete() empties it")
def _():
    vb = B + "-ver"
    s3.create_bucket(Bucket=vb)
    s3.put_bucket_versioning(Bucket=vb, VersioningConfiguration={"Status": "Enabled"})
    assert s3.get_bucket_versioning(Bucket=vb)["Status"] == "Enabled"
    ids = {}
    for body in [b"one", b"two" * 1000, b"three"]:
        ids[s3.put_object(Bucket=vb, Key="k", Body=body)["VersionId"]] = body
    s3.put_object(Bucket=vb, Key="other", Body=b"x")
    for vid, body in ids.items():
        assert s3.get_object(Bucket=vb, Key="k", VersionId=vid)["Body"].read() == body
    d = s3.delete_object(Bucket=vb, Key="k")
    assert d["DeleteMarker"] and d["VersionId"] not in ids, d
    assert error_code(lambda: s3.head_object(Bucket=vb, Key="k"))[1] == 404
    versions, markers = [], []
    for page in s3.get_paginator("list_object_versions").paginate(Bucket=vb, PaginationConfig={"PageSize": 2}):
        versions += [(v["Key"], v["VersionId"]) for v in page.get("Versions", [])]
        markers += [(m["Key"], m["VersionId"], m["IsLatest"]) for m in page.get("DeleteMarkers", [])]
    assert sorted(v for k, v in versions if k == "k") == sorted(ids), versions
    assert markers == [("k", d["VersionId"], True)], markers
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=vb)["Contents"]] == ["other"]
    res = boto3.resource("s3", endpoint_url=ENDPOINT, region_name="us-east-1", verify=CERT if CERT else None)
    res.Bucket(vb).object_versions.delete()
    assert not s3.list_object_versions(Bucket=vb).get("Versions")
    s3.delete_bucket(Bucket=vb)


@check("empty and delete bucket")
def _():
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=B):
        objs = [{"Key": o["Key"]} for o in page.get("Contents", [])]
        if objs:
            s3.delete_objects(Bucket=B, Delete={"Objects": objs})
    for u in s3.list_multipart_uploads(Bucket=B).get("Uploads", []):
        s3.abort_multipart_upload(Bucket=B, Key=u["Key"], UploadId=u["UploadId"])
    s3.delete_bucket(Bucket=B)
    assert error_code(lambda: s3.head_bucket(Bucket=B))[1] == 404


shutil.rmtree(tmp, ignore_errors=True)
print("%d passed, %d failed" % (results["passed"], results["failed"]))
sys.exit(1 if results["failed"] else 0)
