package gateway

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/rs/zerolog/hlog"

	"tessera/gateway/sigv4"
	"tessera/meta"
	"tessera/object"
)

// errCode indexes errorTable. Several codes may render the same S3 <Code>
// with different descriptions (errExpiredRequest is an AccessDenied).
type errCode int

const (
	errInternal errCode = iota
	errAccessDenied
	errExpiredRequest
	errInvalidAccessKeyID
	errSignatureDoesNotMatch
	errRequestTimeTooSkewed
	errAuthorizationHeaderMalformed
	errAuthorizationQueryParametersError
	errNotImplemented
	errContentSHA256Mismatch
	errIncompleteBody
	errBadDigest
	errInvalidDigest
	errInvalidChecksum
	errInvalidRequest
	errInvalidArgument
	errNoSuchBucket
	errNoSuchKey
	errBucketAlreadyOwnedByYou
	errBucketNotEmpty
	errNoSuchUpload
	errInvalidPart
	errInvalidPartOrder
	errEntityTooSmall
	errEntityTooLarge
	errInvalidStorageClass
	errInvalidRedirectLocation
	errInvalidBucketACLWithOwnership
	errCodeTooWide
	errInvalidRange
	errServiceUnavailable
	errInsufficientStorage
	errInvalidBucketName
	errKeyTooLong
	errMalformedXML
	errMaxMessageLengthExceeded
	errInvalidLocationConstraint
	errMissingContentLength
	errMetadataTooLarge
	errMethodNotAllowed
	errPreconditionFailed
	errNotModified
	errCopyToSelf
	errRequestTimeout
	errInvalidPartNumber
	errInvalidCopySource
	errInvalidContinuationToken
	errInvalidEncodingType
	errInvalidVersionID
	errNoSuchVersion
	errIllegalVersioningConfiguration
	errInvalidBucketState
	errMissingRequestBody
	errObjectLockConfigurationNotFound
	errNoSuchObjectLockConfiguration
	errMalformedPOSTRequest
	errInvalidPolicyDocument
	errInvalidPartNumberRange
	errNoSuchCORSConfiguration
	errNoSuchTagSet
	errNoSuchLifecycleConfiguration
	errCORSNotEnabled
	errCORSNotAllowed
	errBadRequest
	errInvalidTag
	errRequestHeaderSectionTooLarge
	errInvalidToken
	errMalformedTrailer
	errInvalidChunkSize
	errBadRequest400
)

// apiError is one row of the S3 error table.
type apiError struct {
	Code        string
	Status      int
	Description string
}

// errorTable is the single place S3 error codes, statuses and default
// messages live.
var errorTable = map[errCode]apiError{
	errInternal:                          {"InternalError", http.StatusInternalServerError, "We encountered an internal error. Please try again."},
	errAccessDenied:                      {"AccessDenied", http.StatusForbidden, "Access Denied."},
	errExpiredRequest:                    {"AccessDenied", http.StatusForbidden, "Request has expired"},
	errInvalidAccessKeyID:                {"InvalidAccessKeyId", http.StatusForbidden, "The AWS Access Key Id you provided does not exist in our records."},
	errSignatureDoesNotMatch:             {"SignatureDoesNotMatch", http.StatusForbidden, "The request signature we calculated does not match the signature you provided. Check your key and signing method."},
	errRequestTimeTooSkewed:              {"RequestTimeTooSkewed", http.StatusForbidden, "The difference between the request time and the current time is too large."},
	errAuthorizationHeaderMalformed:      {"AuthorizationHeaderMalformed", http.StatusBadRequest, "The authorization header is malformed."},
	errAuthorizationQueryParametersError: {"AuthorizationQueryParametersError", http.StatusBadRequest, "The authorization query parameters are malformed."},
	errNotImplemented:                    {"NotImplemented", http.StatusNotImplemented, "A header or query you provided implies functionality that is not implemented."},
	errContentSHA256Mismatch:             {"XAmzContentSHA256Mismatch", http.StatusBadRequest, "The provided 'x-amz-content-sha256' header does not match what was computed."},
	errIncompleteBody:                    {"IncompleteBody", http.StatusBadRequest, "You did not provide the number of bytes specified by the Content-Length HTTP header."},
	errBadDigest:                         {"BadDigest", http.StatusBadRequest, "The Content-MD5 or checksum you specified did not match what we received."},
	errInvalidDigest:                     {"InvalidDigest", http.StatusBadRequest, "The Content-Md5 you specified is not valid."},
	errInvalidChecksum:                   {"InvalidRequest", http.StatusBadRequest, "The checksum header or trailer is invalid."},
	errInvalidRequest:                    {"InvalidRequest", http.StatusBadRequest, "Invalid request."},
	errInvalidArgument:                   {"InvalidArgument", http.StatusBadRequest, "Invalid argument."},
	errNoSuchBucket:                      {"NoSuchBucket", http.StatusNotFound, "The specified bucket does not exist."},
	errNoSuchKey:                         {"NoSuchKey", http.StatusNotFound, "The specified key does not exist."},
	errBucketAlreadyOwnedByYou:           {"BucketAlreadyOwnedByYou", http.StatusConflict, "Your previous request to create the named bucket succeeded and you already own it."},
	errBucketNotEmpty:                    {"BucketNotEmpty", http.StatusConflict, "The bucket you tried to delete is not empty."},
	errNoSuchUpload:                      {"NoSuchUpload", http.StatusNotFound, "The specified multipart upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed."},
	errInvalidPart:                       {"InvalidPart", http.StatusBadRequest, "One or more of the specified parts could not be found.  The part may not have been uploaded, or the specified entity tag may not match the part's entity tag."},
	errInvalidPartOrder:                  {"InvalidPartOrder", http.StatusBadRequest, "The list of parts was not in ascending order. Parts must be ordered by part number."},
	errEntityTooSmall:                    {"EntityTooSmall", http.StatusBadRequest, "Your proposed upload is smaller than the minimum allowed size"},
	errEntityTooLarge:                    {"EntityTooLarge", http.StatusBadRequest, "Your proposed upload exceeds the maximum allowed object size."},
	errInvalidStorageClass:               {"InvalidStorageClass", http.StatusBadRequest, "The storage class you specified is not valid."},
	errInvalidRedirectLocation:           {"InvalidRedirectLocation", http.StatusBadRequest, "The website redirect location must have a prefix of 'http://' or 'https://' or '/'."},
	errInvalidBucketACLWithOwnership:     {"InvalidBucketAclWithObjectOwnership", http.StatusBadRequest, "Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced setting"},
	errCodeTooWide:                       {"InvalidStorageClass", http.StatusBadRequest, "The storage class's erasure code needs more storage peers than the cluster has."},
	errInvalidRange:                      {"InvalidRange", http.StatusRequestedRangeNotSatisfiable, "The requested range is not satisfiable"},
	errServiceUnavailable:                {"ServiceUnavailable", http.StatusServiceUnavailable, "Too few storage peers answered; please retry."},
	errInsufficientStorage:               {"InsufficientStorage", http.StatusInsufficientStorage, "Too many storage peers are out of space to store the object; free or add space, then retry."},
	errInvalidBucketName:                 {"InvalidBucketName", http.StatusBadRequest, "The specified bucket is not valid."},
	errKeyTooLong:                        {"KeyTooLongError", http.StatusBadRequest, "Your key is too long."},
	errMalformedXML:                      {"MalformedXML", http.StatusBadRequest, "The XML you provided was not well-formed or did not validate against our published schema."},
	errMaxMessageLengthExceeded:          {"MaxMessageLengthExceeded", http.StatusBadRequest, "Your request was too big."},
	errInvalidLocationConstraint:         {"InvalidLocationConstraint", http.StatusBadRequest, "The specified location-constraint is not valid"},
	errMissingContentLength:              {"MissingContentLength", http.StatusLengthRequired, "You must provide the Content-Length HTTP header."},
	errMetadataTooLarge:                  {"MetadataTooLarge", http.StatusBadRequest, "Your metadata headers exceed the maximum allowed metadata size"},
	errMethodNotAllowed:                  {"MethodNotAllowed", http.StatusMethodNotAllowed, "The specified method is not allowed against this resource."},
	errPreconditionFailed:                {"PreconditionFailed", http.StatusPreconditionFailed, "At least one of the pre-conditions you specified did not hold."},
	errNotModified:                       {"NotModified", http.StatusNotModified, "Not Modified."},
	errCopyToSelf:                        {"InvalidRequest", http.StatusBadRequest, "This copy request is illegal because it is trying to copy an object to itself without changing the object's metadata, storage class, website redirect location or encryption attributes."},
	errRequestTimeout:                    {"RequestTimeout", http.StatusBadRequest, "Your socket connection to the server was not read from or written to within the timeout period."},
	errInvalidPartNumber:                 {"InvalidArgument", http.StatusBadRequest, "Part number must be an integer between 1 and 10000, inclusive."},
	errInvalidCopySource:                 {"InvalidArgument", http.StatusBadRequest, "Copy Source must mention the source bucket and key: sourcebucket/sourcekey."},
	errInvalidContinuationToken:          {"InvalidArgument", http.StatusBadRequest, "The continuation token provided is incorrect."},
	errInvalidEncodingType:               {"InvalidArgument", http.StatusBadRequest, "Invalid Encoding Method specified in Request."},
	errInvalidVersionID:                  {"InvalidArgument", http.StatusBadRequest, "Invalid version id specified"},
	errNoSuchVersion:                     {"NoSuchVersion", http.StatusNotFound, "The specified version does not exist."},
	errIllegalVersioningConfiguration:    {"IllegalVersioningConfigurationException", http.StatusBadRequest, "The versioning configuration specified in the request is invalid."},
	errInvalidBucketState:                {"InvalidBucketState", http.StatusConflict, "The request is not valid with the current state of the bucket."},
	errMissingRequestBody:                {"MissingRequestBodyError", http.StatusBadRequest, "Request Body is empty"},
	errObjectLockConfigurationNotFound:   {"ObjectLockConfigurationNotFoundError", http.StatusNotFound, "Object Lock configuration does not exist for this bucket."},
	errNoSuchObjectLockConfiguration:     {"NoSuchObjectLockConfiguration", http.StatusNotFound, "The specified object does not have a ObjectLock configuration."},
	errMalformedPOSTRequest:              {"MalformedPOSTRequest", http.StatusBadRequest, "The body of your POST request is not well-formed multipart/form-data."},
	errInvalidPartNumberRange:            {"InvalidPartNumber", http.StatusRequestedRangeNotSatisfiable, "The requested partnumber is not satisfiable."},
	errInvalidPolicyDocument:             {"InvalidPolicyDocument", http.StatusBadRequest, "The content of the form does not meet the conditions specified in the policy document."},
	errNoSuchCORSConfiguration:           {"NoSuchCORSConfiguration", http.StatusNotFound, "The CORS configuration does not exist"},
	errNoSuchTagSet:                      {"NoSuchTagSet", http.StatusNotFound, "The TagSet does not exist."},
	errNoSuchLifecycleConfiguration:      {"NoSuchLifecycleConfiguration", http.StatusNotFound, "The lifecycle configuration does not exist."},
	errCORSNotEnabled:                    {"AccessForbidden", http.StatusForbidden, "CORSResponse: CORS is not enabled for this bucket."},
	errCORSNotAllowed:                    {"AccessForbidden", http.StatusForbidden, "CORSResponse: This CORS request is not allowed. This is usually because the evalution of Origin, request method / Access-Control-Request-Method or Access-Control-Request-Headers are not whitelisted by the resource's CORS spec."},
	errBadRequest:                        {"BadRequest", http.StatusBadRequest, "Insufficient information. Origin request header needed."},
	errInvalidTag:                        {"InvalidTag", http.StatusBadRequest, "The tag provided was not a valid tag."},
	errRequestHeaderSectionTooLarge:      {"RequestHeaderSectionTooLarge", http.StatusBadRequest, "Your request header section exceeds the maximum allowed size."},
	errInvalidToken:                      {"InvalidToken", http.StatusBadRequest, "The provided token is malformed or otherwise invalid."},
	errMalformedTrailer:                  {"MalformedTrailerError", http.StatusBadRequest, "The request contained trailing data that was not well-formed or did not conform to our published schema."},
	errInvalidChunkSize:                  {"InvalidChunkSizeError", http.StatusBadRequest, "Only the last chunk is allowed to have a size less than 8192 bytes"},
	// S3 answers some malformed request paths with a bare 400, which
	// botocore reports as code "400", "Bad Request"; the body says the
	// same, so every SDK reads that.
	errBadRequest400: {"400", http.StatusBadRequest, "Bad Request"},
}

// s3Error is an error the handlers raise with a fixed table entry; msg,
// when set, replaces the table's description, and fields are extra
// elements of the body after <Message> (S3's <Region>, <Condition>,
// <ArgumentName>, ...).
type s3Error struct {
	code   errCode
	msg    string
	fields []errorField
	allow  string // the Allow header of a MethodNotAllowed
}

// errorField is one extra element of an error body.
type errorField struct {
	Name, Value string
}

// withFields returns err with extra body elements; err must be an
// *s3Error from apiErr or apiErrf.
func withFields(err error, fields ...errorField) error {
	se, ok := err.(*s3Error)
	if !ok {
		return err
	}
	out := *se
	out.fields = append(append([]errorField(nil), se.fields...), fields...)
	return &out
}

func (e *s3Error) Error() string {
	a := errorTable[e.code]
	if e.msg != "" {
		return a.Code + ": " + e.msg
	}
	return a.Code + ": " + a.Description
}

// apiErr returns the handler error for code with its default message.
func apiErr(code errCode) error { return &s3Error{code: code} }

// apiErrf returns the handler error for code with a specific message.
func apiErrf(code errCode, format string, args ...any) error {
	return &s3Error{code: code, msg: fmt.Sprintf(format, args...)}
}

// apiErrFields returns the handler error for code with its default
// message and extra body elements.
func apiErrFields(code errCode, fields ...errorField) error {
	return &s3Error{code: code, fields: fields}
}

// isCode reports whether err is a handler error with the given code.
func isCode(err error, code errCode) bool {
	var se *s3Error
	return errors.As(err, &se) && se.code == code
}

// sentinels maps errors from the layers below to table entries. Order
// matters only where one error could wrap another: authentication and
// digest failures come before the generic body-read ones.
var sentinels = []struct {
	err  error
	code errCode
}{
	{sigv4.ErrMissingAuth, errAccessDenied},
	{sigv4.ErrInvalidAccessKeyID, errInvalidAccessKeyID},
	{sigv4.ErrSignatureDoesNotMatch, errSignatureDoesNotMatch},
	{sigv4.ErrRequestTimeTooSkewed, errRequestTimeTooSkewed},
	{sigv4.ErrExpired, errExpiredRequest},
	{sigv4.ErrMalformed, errAuthorizationHeaderMalformed},
	{sigv4.ErrMalformedQuery, errAuthorizationQueryParametersError},
	{sigv4.ErrInvalidAuthorization, errInvalidArgument},
	{sigv4.ErrAccessDenied, errAccessDenied},
	{sigv4.ErrUnsignedHeaders, errAccessDenied},
	{sigv4.ErrMissingHeader, errInvalidRequest},
	{sigv4.ErrUnsupported, errNotImplemented},
	{sigv4.ErrContentSHA256Mismatch, errContentSHA256Mismatch},
	{sigv4.ErrChunk, errIncompleteBody},
	{sigv4.ErrMalformedTrailer, errMalformedTrailer},
	{sigv4.ErrChunkSize, errInvalidChunkSize},
	{sigv4.ErrMissingLength, errMissingContentLength},
	{sigv4.ErrInvalidToken, errInvalidToken},
	{sigv4.ErrChecksumMismatch, errBadDigest},
	{sigv4.ErrInvalidChecksum, errInvalidChecksum},

	{object.ErrBucketNotFound, errNoSuchBucket},
	{meta.ErrObjectLocked, errAccessDenied},
	{object.ErrObjectNotFound, errNoSuchKey},
	{object.ErrBucketExists, errBucketAlreadyOwnedByYou},
	{object.ErrBucketNotEmpty, errBucketNotEmpty},
	{object.ErrUploadNotFound, errNoSuchUpload},
	{object.ErrInvalidPart, errInvalidPart},
	{object.ErrInvalidPartOrder, errInvalidPartOrder},
	{object.ErrEntityTooSmall, errEntityTooSmall},
	{object.ErrEntityTooLarge, errEntityTooLarge},
	{object.ErrInvalidStorageClass, errInvalidStorageClass},
	{object.ErrCodeTooWide, errCodeTooWide},
	{object.ErrIncompleteBody, errIncompleteBody},
	{object.ErrBadDigest, errBadDigest},
	{object.ErrPreconditionFailed, errPreconditionFailed},
	{object.ErrInvalidRange, errInvalidRange},
	{object.ErrInvalidChecksumConfig, errInvalidRequest},
	// Peers refused the request as malformed: the client's fault, never
	// a 503 that SDKs would retry.
	{object.ErrInvalidArgument, errInvalidArgument},
	// Before ErrQuorum, which a write short of space also matches.
	{object.ErrInsufficientStorage, errInsufficientStorage},
	{object.ErrQuorum, errServiceUnavailable},

	{io.ErrUnexpectedEOF, errIncompleteBody},
	{context.Canceled, errRequestTimeout},
	{context.DeadlineExceeded, errServiceUnavailable},
}

// classify maps any error to a table entry, the message to send and the
// extra body elements.
func classify(err error) (apiError, string, []errorField) {
	if ce := checksumErr(err); ce != nil {
		err = ce
	}
	var de *object.DigestError
	if errors.As(err, &de) {
		err = md5Mismatch(de.Want, de.Got)
	}
	var se *s3Error
	if errors.As(err, &se) {
		a := errorTable[se.code]
		if se.msg != "" {
			return a, se.msg, se.fields
		}
		return a, a.Description, se.fields
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		a := errorTable[errMaxMessageLengthExceeded]
		return a, a.Description, nil
	}
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			a := errorTable[s.code]
			return a, authMessage(err, a.Description), authElements(err)
		}
	}
	a := errorTable[errInternal]
	return a, a.Description, nil
}

// md5Mismatch is S3's BadDigest for a body whose MD5 is not the stated
// Content-MD5. S3 writes the digest it computed in base64 and the one
// the client stated in hex.
func md5Mismatch(want, got []byte) error {
	return withFields(apiErrf(errBadDigest, "The Content-MD5 you specified did not match what we received."),
		errorField{"CalculatedDigest", base64.StdEncoding.EncodeToString(got)},
		errorField{"ExpectedDigest", hex.EncodeToString(want)})
}

// errorResponse is S3's error body; it carries no namespace.
type errorResponse struct {
	XMLName   xml.Name       `xml:"Error"`
	Code      string         `xml:"Code"`
	Message   string         `xml:"Message"`
	Fields    []xmlFieldElem `xml:",any"`
	Resource  string         `xml:"Resource"`
	RequestID string         `xml:"RequestId"`
}

// xmlFieldElem renders an errorField as <Name>Value</Name>.
type xmlFieldElem struct {
	XMLName xml.Name
	Value   string `xml:",chardata"`
}

func fieldElems(fields []errorField) []xmlFieldElem {
	out := make([]xmlFieldElem, 0, len(fields))
	for _, f := range fields {
		out = append(out, xmlFieldElem{XMLName: xml.Name{Local: f.Name}, Value: f.Value})
	}
	return out
}

var textQuotes = strings.NewReplacer("&#34;", `"`, "&#39;", "'")

// serverFault reports whether status is the server's failure, worth an
// error line: a 5xx other than 501, which answers a request for something
// tessera does not implement and so is the client's doing.
func serverFault(status int) bool {
	return status >= http.StatusInternalServerError && status != http.StatusNotImplemented
}

// writeError renders err as an S3 error response. HEAD responses and 304
// carry no body. Server-side failures are logged with the request id;
// the client's own errors only at debug level. A request whose client went
// away (its context canceled) is the client's doing whatever the error
// its cancellation caused: peer calls cut short surface as a quorum
// failure, which is no fault of the cluster and worth no error line.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	a, msg, fields := classify(err)
	if errors.Is(r.Context().Err(), context.Canceled) {
		a, msg, fields = classify(context.Canceled)
	}
	log := hlog.FromRequest(r)
	if serverFault(a.Status) {
		log.Error().Err(err).Str("code", a.Code).Msg("request failed")
	} else {
		log.Debug().Err(err).Str("code", a.Code).Msg("request rejected")
	}
	if r.Method == http.MethodHead || a.Status == http.StatusNotModified {
		w.Header().Del("Content-Length")
		w.WriteHeader(a.Status)
		return
	}
	reqID := ""
	if id, ok := hlog.IDFromRequest(r); ok {
		reqID = id.String()
	}
	// Marshal cannot fail on a struct of strings (invalid UTF-8 becomes U+FFFD).
	body, _ := xml.Marshal(errorResponse{Code: a.Code, Message: msg, Fields: fieldElems(fields), Resource: r.URL.Path, RequestID: reqID})
	// encoding/xml escapes quotes in text; S3 writes them as they are,
	// and clients match its messages as text (a POST policy's failed
	// condition quotes its terms). The body has no attributes, so
	// unescaping them is safe.
	body = append([]byte(xml.Header), textQuotes.Replace(string(body))...)
	h := w.Header()
	var se *s3Error
	if errors.As(err, &se) && se.allow != "" {
		h.Set("Allow", se.allow)
	}
	h.Set("Content-Type", "application/xml")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(a.Status)
	_, _ = w.Write(body)
}

// refusalCodes are the S3 codes the configuration packages (lifecycle,
// versioning, objectlock) refuse a request with.
var refusalCodes = map[string]errCode{
	"MalformedXML": errMalformedXML, "InvalidArgument": errInvalidArgument, "InvalidRequest": errInvalidRequest,
	"NotImplemented": errNotImplemented, "AccessDenied": errAccessDenied,
	"IllegalVersioningConfigurationException": errIllegalVersioningConfiguration,
}

// refusal is such a package's refusal as S3 answers it: its code (an
// unknown one as MalformedXML) and message.
func refusal(code, message string) error {
	c, ok := refusalCodes[code]
	if !ok {
		c = errMalformedXML
	}
	return apiErrf(c, "%s", message)
}
