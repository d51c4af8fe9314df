package lifecycle

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"time"
)

// ConfigName is the bucket configuration (object.Layer's PutBucketConfig)
// a bucket's lifecycle rules are stored under, as the XML Parse accepted.
const ConfigName = "lifecycle"

// MaxRules is S3's limit on rules in one configuration.
const MaxRules = 1000

// Configuration is a bucket's lifecycle configuration, as S3's
// PutBucketLifecycleConfiguration takes it.
type Configuration struct {
	XMLName xml.Name `xml:"LifecycleConfiguration"`
	Rules   []Rule   `xml:"Rule"`
}

// Rule is one lifecycle rule: which objects (Filter, or the older
// top-level Prefix) and what happens to them.
type Rule struct {
	ID     string  `xml:"ID,omitempty"`
	Status string  `xml:"Status"`
	Filter *Filter `xml:"Filter,omitempty"`
	// Prefix is the filter of the first version of the API.
	Prefix *string `xml:"Prefix,omitempty"`

	Expiration                     *Expiration           `xml:"Expiration,omitempty"`
	NoncurrentVersionExpiration    *NoncurrentExpiration `xml:"NoncurrentVersionExpiration,omitempty"`
	AbortIncompleteMultipartUpload *AbortIncomplete      `xml:"AbortIncompleteMultipartUpload,omitempty"`
	// Transitions move objects to other storage tiers, which tessera
	// does not have: a rule with one is refused.
	Transitions           []struct{} `xml:"Transition"`
	NoncurrentTransitions []struct{} `xml:"NoncurrentVersionTransition"`
}

// Filter selects a rule's objects: exactly one of its fields is set (And
// combines several).
type Filter struct {
	Prefix                *string `xml:"Prefix,omitempty"`
	Tag                   *Tag    `xml:"Tag,omitempty"`
	And                   *And    `xml:"And,omitempty"`
	ObjectSizeGreaterThan *int64  `xml:"ObjectSizeGreaterThan,omitempty"`
	ObjectSizeLessThan    *int64  `xml:"ObjectSizeLessThan,omitempty"`
}

// And is a filter of several conditions, all of which must hold.
type And struct {
	Prefix                *string `xml:"Prefix,omitempty"`
	Tags                  []Tag   `xml:"Tag"`
	ObjectSizeGreaterThan *int64  `xml:"ObjectSizeGreaterThan,omitempty"`
	ObjectSizeLessThan    *int64  `xml:"ObjectSizeLessThan,omitempty"`
}

// Tag is an object tag a filter requires.
type Tag struct {
	Key   string `xml:"Key"`
	Value string `xml:"Value"`
}

// Expiration deletes objects: Days after their last write (rounded up to
// the next midnight UTC, as S3 does), or all of them from Date on.
// ExpiredObjectDeleteMarker removes delete markers left alone, which only
// versioned buckets have.
type Expiration struct {
	Days                      *int    `xml:"Days,omitempty"`
	Date                      *string `xml:"Date,omitempty"`
	ExpiredObjectDeleteMarker *bool   `xml:"ExpiredObjectDeleteMarker,omitempty"`
}

// NoncurrentExpiration removes versions that are no longer current, which
// only versioned buckets have.
type NoncurrentExpiration struct {
	NoncurrentDays          *int `xml:"NoncurrentDays,omitempty"`
	NewerNoncurrentVersions *int `xml:"NewerNoncurrentVersions,omitempty"`
}

// AbortIncomplete aborts multipart uploads DaysAfterInitiation days after
// they began.
type AbortIncomplete struct {
	DaysAfterInitiation *int `xml:"DaysAfterInitiation,omitempty"`
}

// Error is a configuration S3 refuses, with the error code it answers.
type Error struct {
	Code    string // MalformedXML, InvalidArgument, InvalidRequest or NotImplemented
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func malformed(msg string) error { return &Error{Code: "MalformedXML", Message: msg} }

func invalidArg(format string, args ...any) error {
	return &Error{Code: "InvalidArgument", Message: fmt.Sprintf(format, args...)}
}

func invalidReq(msg string) error { return &Error{Code: "InvalidRequest", Message: msg} }

// Parse decodes and checks a configuration as S3 does; a refusal is an
// *Error.
func Parse(data []byte) (*Configuration, error) {
	var c Configuration
	d := xml.NewDecoder(bytes.NewReader(data))
	if err := d.Decode(&c); err != nil {
		return nil, malformed("The XML you provided was not well-formed or did not validate against our published schema.")
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return nil, malformed("The XML you provided was not well-formed or did not validate against our published schema.")
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

func (c *Configuration) validate() error {
	if len(c.Rules) == 0 {
		return malformed("The XML you provided was not well-formed or did not validate against our published schema.")
	}
	if len(c.Rules) > MaxRules {
		return invalidReq(fmt.Sprintf("A lifecycle configuration can have at most %d rules.", MaxRules))
	}
	ids := map[string]bool{}
	for i := range c.Rules {
		r := &c.Rules[i]
		if r.ID != "" {
			if ids[r.ID] {
				return invalidArg("Rule ID must be unique. Found same ID for more than one rule")
			}
			ids[r.ID] = true
		}
		if err := r.validate(); err != nil {
			return err
		}
	}
	return nil
}

func (r *Rule) validate() error {
	if len(r.ID) > 255 {
		return invalidArg("ID length should not exceed allowed limit of 255")
	}
	if r.Status != "Enabled" && r.Status != "Disabled" {
		return malformed("The XML you provided was not well-formed or did not validate against our published schema.")
	}
	if len(r.Transitions) > 0 || len(r.NoncurrentTransitions) > 0 {
		return &Error{Code: "NotImplemented", Message: "Transition actions are not supported: tessera has one storage tier."}
	}
	if r.Expiration == nil && r.NoncurrentVersionExpiration == nil && r.AbortIncompleteMultipartUpload == nil {
		return invalidReq("At least one action needs to be specified in a rule")
	}
	if r.Filter != nil && r.Prefix != nil {
		return malformed("The XML you provided was not well-formed or did not validate against our published schema.")
	}
	if err := r.Filter.validate(); err != nil {
		return err
	}
	if err := r.Expiration.validate(); err != nil {
		return err
	}
	if n := r.NoncurrentVersionExpiration; n != nil {
		if n.NoncurrentDays == nil || *n.NoncurrentDays <= 0 {
			return invalidArg("'NoncurrentDays' for NoncurrentVersionExpiration action must be a positive integer")
		}
		if n.NewerNoncurrentVersions != nil && (*n.NewerNoncurrentVersions <= 0 || *n.NewerNoncurrentVersions > 100) {
			return invalidArg("'NewerNoncurrentVersions' for NoncurrentVersionExpiration action must be a positive integer up to 100")
		}
	}
	if a := r.AbortIncompleteMultipartUpload; a != nil {
		if a.DaysAfterInitiation == nil || *a.DaysAfterInitiation <= 0 {
			return invalidArg("'DaysAfterInitiation' for AbortIncompleteMultipartUpload action must be a positive integer")
		}
		if len(r.filterTags()) > 0 {
			return invalidReq("AbortIncompleteMultipartUpload cannot be specified with Tags.")
		}
	}
	return nil
}

func (f *Filter) validate() error {
	if f == nil {
		return nil
	}
	set := 0
	for _, ok := range []bool{f.Prefix != nil, f.Tag != nil, f.And != nil, f.ObjectSizeGreaterThan != nil, f.ObjectSizeLessThan != nil} {
		if ok {
			set++
		}
	}
	if set > 1 {
		return malformed("The XML you provided was not well-formed or did not validate against our published schema.")
	}
	if f.Tag != nil {
		if err := checkTag(*f.Tag); err != nil {
			return err
		}
	}
	if a := f.And; a != nil {
		seen := map[string]bool{}
		for _, t := range a.Tags {
			if err := checkTag(t); err != nil {
				return err
			}
			if seen[t.Key] {
				return invalidArg("Duplicate Tag Keys are not allowed.")
			}
			seen[t.Key] = true
		}
		if err := checkSizes(a.ObjectSizeGreaterThan, a.ObjectSizeLessThan); err != nil {
			return err
		}
	}
	return checkSizes(f.ObjectSizeGreaterThan, f.ObjectSizeLessThan)
}

func checkTag(t Tag) error {
	if t.Key == "" || len(t.Key) > 128 || len(t.Value) > 256 {
		return invalidArg("The TagKey you have provided is invalid")
	}
	return nil
}

func checkSizes(gt, lt *int64) error {
	if (gt != nil && *gt < 0) || (lt != nil && *lt <= 0) {
		return invalidArg("'ObjectSizeGreaterThan' and 'ObjectSizeLessThan' must be non-negative")
	}
	if gt != nil && lt != nil && *gt >= *lt {
		return invalidArg("'ObjectSizeGreaterThan' must be less than 'ObjectSizeLessThan'")
	}
	return nil
}

func (e *Expiration) validate() error {
	if e == nil {
		return nil
	}
	n := 0
	for _, ok := range []bool{e.Days != nil, e.Date != nil, e.ExpiredObjectDeleteMarker != nil} {
		if ok {
			n++
		}
	}
	if n != 1 {
		return malformed("The XML you provided was not well-formed or did not validate against our published schema.")
	}
	if e.Days != nil && *e.Days <= 0 {
		return invalidArg("'Days' for Expiration action must be a positive integer")
	}
	if e.Date != nil {
		d, err := time.Parse(time.RFC3339, *e.Date)
		if err != nil {
			return invalidArg("'Date' must be in ISO 8601 format")
		}
		if d.UTC() != d.UTC().Truncate(24*time.Hour) {
			return invalidArg("'Date' must be at midnight GMT")
		}
	}
	return nil
}
