#!/usr/bin/env python3
"""boto3 with Signature Version 2 (signature_version='s3') on every kind of
request: bucket operations, sub-resources, response overrides, copies with
x-amz-copy-source-if-*, multipart, DeleteObjects, CORS, presigned URLs.

Environment: ENDPOINT, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY; ADDRESSING
is "path" (default) or "virtual"; for virtual, DOMAIN is the server's
--domain and requests go through the server itself as an HTTP proxy, so no
DNS name has to resolve. Prints one line per check and a tally; exits 1 on
any failure.
"""
import datetime
import hashlib
import os
import sys
import traceback
import urllib.request

import boto3
from botocore.config import Config

ENDPOINT = os.environ["ENDPOINT"]
ADDRESSING = os.environ.get("ADDRESSING", "path")
passed, failed = 0, 0


def check(name, fn):
    global passed, failed
    try:
        fn()
        passed += 1
        print("ok   " + name)
    except Exception:  # report and go on, like the other suites
        failed += 1
        print("FAIL " + name)
        for line in traceback.format_exc().splitlines()[-6:]:
            print("     | " + line)


def client():
    cfg = dict(signature_version="s3", s3={"addressing_style": ADDRESSING},
               retries={"max_attempts": 1})
    endpoint = ENDPOINT
    if ADDRESSING == "virtual":
        cfg["proxies"] = {"http": ENDPOINT}
        endpoint = "http://" + os.environ["DOMAIN"]
    return boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", config=Config(**cfg))


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def main():
    s3 = client()
    b = "v2-%s-%d" % (ADDRESSING, os.getpid())
    key = "dir/a b+c~(1)!.txt"
    body = b"hello signature v2\n"
    state = {}
    print("boto3 %s, signature_version=s3, %s style" % (boto3.__version__, ADDRESSING))

    check("create_bucket", lambda: s3.create_bucket(Bucket=b))
    check("head_bucket", lambda: s3.head_bucket(Bucket=b))
    check("get_bucket_location (?location)", lambda: s3.get_bucket_location(Bucket=b))
    check("put_object with metadata", lambda: s3.put_object(
        Bucket=b, Key=key, Body=body, ContentType="text/plain", Metadata={"a": "1", "a-b": "2"}))

    def head():
        h = s3.head_object(Bucket=b, Key=key)
        expect(h["Metadata"] == {"a": "1", "a-b": "2"}, h["Metadata"])
        state["etag"] = h["ETag"]
    check("head_object", head)

    def get_overrides():
        g = s3.get_object(Bucket=b, Key=key, ResponseContentType="application/x-test",
                          ResponseContentDisposition='attachment; filename="x y"',
                          ResponseCacheControl="no-cache")
        expect(g["Body"].read() == body, "body")
        expect(g["ContentType"] == "application/x-test", g["ContentType"])
        expect(g["ContentDisposition"] == 'attachment; filename="x y"', g["ContentDisposition"])
    check("get_object with response-* overrides", get_overrides)

    tags = {"TagSet": [{"Key": "k", "Value": "v w"}]}
    check("put_object_tagging (?tagging)", lambda: s3.put_object_tagging(Bucket=b, Key=key, Tagging=tags))
    check("get_object_tagging (?tagging)", lambda: expect(
        s3.get_object_tagging(Bucket=b, Key=key)["TagSet"] == tags["TagSet"], "tags"))

    def copy():
        s3.copy_object(Bucket=b, Key="copy", CopySource={"Bucket": b, "Key": key},
                       CopySourceIfMatch=state["etag"],
                       CopySourceIfUnmodifiedSince=datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1),
                       MetadataDirective="REPLACE", Metadata={"copied": "yes"}, ContentType="text/x-copy")
        h = s3.head_object(Bucket=b, Key="copy")
        expect(h["Metadata"] == {"copied": "yes"} and h["ContentType"] == "text/x-copy", h)
    check("copy_object with x-amz-copy-source-if-*", copy)

    def copy_precondition():
        try:
            s3.copy_object(Bucket=b, Key="copy2", CopySource={"Bucket": b, "Key": key}, CopySourceIfMatch='"nope"')
        except s3.exceptions.ClientError as e:
            expect(e.response["Error"]["Code"] == "PreconditionFailed", e.response["Error"])
            return
        raise AssertionError("copy with a failing condition succeeded")
    check("copy_object condition failing is PreconditionFailed, not a signature error", copy_precondition)

    def multipart():
        part = os.urandom(5 << 20)
        up = s3.create_multipart_upload(Bucket=b, Key="mp", ContentType="application/x-mp")
        uid = up["UploadId"]
        e1 = s3.upload_part(Bucket=b, Key="mp", UploadId=uid, PartNumber=1, Body=part)["ETag"]
        e2 = s3.upload_part_copy(Bucket=b, Key="mp", UploadId=uid, PartNumber=2,
                                 CopySource={"Bucket": b, "Key": key})["CopyPartResult"]["ETag"]
        parts = s3.list_parts(Bucket=b, Key="mp", UploadId=uid)["Parts"]
        expect([p["PartNumber"] for p in parts] == [1, 2], parts)
        ups = s3.list_multipart_uploads(Bucket=b).get("Uploads", [])
        expect(any(u["UploadId"] == uid for u in ups), ups)
        s3.complete_multipart_upload(Bucket=b, Key="mp", UploadId=uid, MultipartUpload={
            "Parts": [{"PartNumber": 1, "ETag": e1}, {"PartNumber": 2, "ETag": e2}]})
        got = s3.get_object(Bucket=b, Key="mp")["Body"].read()
        expect(got == part + body, "multipart object differs")
        s3.head_object(Bucket=b, Key="mp", PartNumber=1)
        gone = s3.create_multipart_upload(Bucket=b, Key="aborted")["UploadId"]
        s3.abort_multipart_upload(Bucket=b, Key="aborted", UploadId=gone)
    check("multipart (?uploads, ?partNumber=&uploadId=, upload_part_copy, ?uploadId=)", multipart)

    def transfer():
        data = os.urandom(20 << 20)
        path = "/tmp/boto3-sigv2-%d" % os.getpid()
        with open(path, "wb") as f:
            f.write(data)
        try:
            s3.upload_file(path, b, "big")
            s3.download_file(b, "big", path + ".down")
            with open(path + ".down", "rb") as f:
                expect(hashlib.sha256(f.read()).digest() == hashlib.sha256(data).digest(), "20 MB differs")
        finally:
            for p in (path, path + ".down"):
                if os.path.exists(p):
                    os.remove(p)
    check("upload_file / download_file 20 MB", transfer)

    cors = {"CORSRules": [{"AllowedMethods": ["GET"], "AllowedOrigins": ["*"]}]}
    check("put/get/delete_bucket_cors (?cors)", lambda: (
        s3.put_bucket_cors(Bucket=b, CORSConfiguration=cors),
        expect(s3.get_bucket_cors(Bucket=b)["CORSRules"][0]["AllowedMethods"] == ["GET"], "cors"),
        s3.delete_bucket_cors(Bucket=b)))
    check("list_objects", lambda: expect(
        len(s3.list_objects(Bucket=b, Prefix="dir/")["Contents"]) == 1, "list v1"))
    check("list_objects_v2", lambda: expect(
        s3.list_objects_v2(Bucket=b)["KeyCount"] == 4, "list v2"))
    check("list_buckets", lambda: expect(
        any(x["Name"] == b for x in s3.list_buckets()["Buckets"]), "list buckets"))

    def presigned():
        url = s3.generate_presigned_url("get_object", Params={
            "Bucket": b, "Key": key, "ResponseContentType": "text/x-presigned"}, ExpiresIn=300)
        expect("AWSAccessKeyId=" in url, "not a V2 URL: " + url)
        opener = urllib.request.build_opener(urllib.request.ProxyHandler(
            {"http": ENDPOINT} if ADDRESSING == "virtual" else {}))
        with opener.open(url) as resp:
            expect(resp.read() == body, "presigned body")
            expect(resp.headers["Content-Type"] == "text/x-presigned", resp.headers["Content-Type"])
    check("presigned V2 GET with response override", presigned)

    def presigned_expired():
        url = s3.generate_presigned_url("get_object", Params={"Bucket": b, "Key": key}, ExpiresIn=-10)
        opener = urllib.request.build_opener(urllib.request.ProxyHandler(
            {"http": ENDPOINT} if ADDRESSING == "virtual" else {}))
        try:
            opener.open(url)
        except urllib.error.HTTPError as e:
            text = e.read().decode()
            expect(e.code == 403 and "<Code>AccessDenied</Code>" in text and "Request has expired" in text, text)
            return
        raise AssertionError("expired URL answered")
    check("presigned V2 URL past Expires is AccessDenied", presigned_expired)

    check("delete_objects (?delete)", lambda: expect(len(s3.delete_objects(Bucket=b, Delete={
        "Objects": [{"Key": k} for k in ("copy", "mp", "big")]})["Deleted"]) == 3, "deleted"))
    check("delete_object", lambda: s3.delete_object(Bucket=b, Key=key))
    check("delete_bucket", lambda: s3.delete_bucket(Bucket=b))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
