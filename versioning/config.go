// Package versioning is S3 bucket versioning's own logic, apart from the
// HTTP handlers and the object layer: the bucket's versioning setting,
// and how the stored objects of a key read as its S3 versions.
//
// A versioned bucket stores each version of a key as an object of its own
// under a version key (meta.VersionKey) and the null version, written
// while versioning was off or suspended, under the plain key, so that the
// quorum, repair, scrub, data-movement and collection rules of objects
// apply to every version unchanged. This package decides which of those
// objects is the key's latest version and in what order S3 lists them.
package versioning

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
)

// ConfigName is the bucket configuration (object.Layer's PutBucketConfig)
// the versioning setting is stored under, as the XML Parse accepted.
const ConfigName = "versioning"

// Status is a bucket's versioning state. A bucket starts Unversioned and,
// once versioning was enabled, is Enabled or Suspended for good, as in S3.
type Status string

// The versioning states.
const (
	Unversioned Status = ""
	Enabled     Status = "Enabled"
	Suspended   Status = "Suspended"
)

// Configuration is S3's VersioningConfiguration, as PutBucketVersioning
// takes it and GetBucketVersioning answers it.
type Configuration struct {
	XMLName   xml.Name `xml:"VersioningConfiguration"`
	Status    Status   `xml:"Status,omitempty"`
	MFADelete string   `xml:"MfaDelete,omitempty"`
}

// Error is a configuration refused, with the S3 error code to answer.
type Error struct {
	Code    string // MalformedXML, IllegalVersioningConfigurationException or NotImplemented
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Parse reads a PutBucketVersioning body. A body that is not one
// VersioningConfiguration, or a Status or MfaDelete outside the schema's
// values, is MalformedXML; no Status (a bucket never goes back to
// unversioned) is IllegalVersioningConfigurationException, as S3 answers;
// MFA delete, which needs a hardware token tessera does not have, is
// NotImplemented.
func Parse(body []byte) (Configuration, error) {
	var c Configuration
	d := xml.NewDecoder(bytes.NewReader(body))
	if err := d.Decode(&c); err != nil {
		return Configuration{}, &Error{Code: "MalformedXML", Message: "The XML you provided was not well-formed or did not validate against our published schema."}
	}
	if !onlySpaceLeft(d) {
		return Configuration{}, &Error{Code: "MalformedXML", Message: "The XML you provided was not well-formed or did not validate against our published schema."}
	}
	switch c.Status {
	case Enabled, Suspended:
	case Unversioned:
		return Configuration{}, &Error{Code: "IllegalVersioningConfigurationException", Message: "The versioning configuration specified in the request is invalid."}
	default:
		// A value outside the schema's enumeration fails validation.
		return Configuration{}, &Error{Code: "MalformedXML", Message: "The XML you provided was not well-formed or did not validate against our published schema."}
	}
	switch c.MFADelete {
	case "", "Disabled":
	case "Enabled":
		return Configuration{}, &Error{Code: "NotImplemented", Message: "MFA delete is not supported."}
	default:
		return Configuration{}, &Error{Code: "MalformedXML", Message: "The XML you provided was not well-formed or did not validate against our published schema."}
	}
	c.MFADelete = ""
	return c, nil
}

// onlySpaceLeft reports whether nothing but white space follows the
// element d decoded.
func onlySpaceLeft(d *xml.Decoder) bool {
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return true
		}
		cd, ok := tok.(xml.CharData)
		if err != nil || !ok || len(bytes.TrimSpace(cd)) != 0 {
			return false
		}
	}
}
