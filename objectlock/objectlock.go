// Package objectlock is S3 Object Lock's own logic, apart from the HTTP
// handlers and the object layer: a bucket's lock configuration, a
// version's retention and legal hold, and the rule that decides whether a
// version may be deleted or its retention changed.
//
// A version's lock state lives in its object record, as the response
// headers S3 returns for it (Mode, RetainUntilDate, LegalHold below), so
// it is replicated, repaired, moved and scrubbed with the record like
// every other part of it.
package objectlock

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"time"
)

// ConfigName is the bucket configuration (object.Layer's PutBucketConfig)
// a bucket's lock configuration is stored under, as Parse accepted it.
const ConfigName = "objectlock"

// The record headers holding a version's lock state, named as the S3
// response headers that report it.
const (
	ModeHeader      = "X-Amz-Object-Lock-Mode"
	UntilHeader     = "X-Amz-Object-Lock-Retain-Until-Date"
	LegalHoldHeader = "X-Amz-Object-Lock-Legal-Hold"
)

// BypassHeader marks a tombstone written with the caller's consent to
// delete a version under a governance retention
// (x-amz-bypass-governance-retention). Every peer checks the record it
// replaces against the one it receives, so the consent travels in the
// tombstone: the decision is made where the version is, in one step with
// the delete, and a repair carrying the same tombstone later is accepted
// for the same reason.
const BypassHeader = "X-Tessera-Bypass-Governance"

// BypassMark is the headers of a tombstone carrying that consent.
func BypassMark() map[string]string { return map[string]string{BypassHeader: "true"} }

// Bypassed reports whether a record's headers carry the consent.
func Bypassed(headers map[string]string) bool { return headers[BypassHeader] == "true" }

// Mode is a retention mode.
type Mode string

// The retention modes. Governance may be lifted with the bypass header;
// compliance by nobody until it expires.
const (
	Governance Mode = "GOVERNANCE"
	Compliance Mode = "COMPLIANCE"
)

// Error is a request refused, with the S3 error code to answer.
type Error struct {
	Code    string // MalformedXML, InvalidArgument, InvalidRequest or AccessDenied
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func malformed() error {
	return &Error{Code: "MalformedXML", Message: "The XML you provided was not well-formed or did not validate against our published schema."}
}

// Configuration is S3's ObjectLockConfiguration.
type Configuration struct {
	XMLName           xml.Name `xml:"ObjectLockConfiguration"`
	ObjectLockEnabled string   `xml:"ObjectLockEnabled,omitempty"`
	Rule              *Rule    `xml:"Rule,omitempty"`
}

// Rule holds a bucket's default retention.
type Rule struct {
	DefaultRetention DefaultRetention `xml:"DefaultRetention"`
}

// DefaultRetention is the retention new versions get when their write
// names none: Days or Years from the write.
type DefaultRetention struct {
	Mode  Mode `xml:"Mode"`
	Days  int  `xml:"Days,omitempty"`
	Years int  `xml:"Years,omitempty"`
}

// The longest default retention S3 accepts.
const (
	maxDays  = 36500
	maxYears = 100
)

// Enabled is the configuration CreateBucket with object lock stores.
func Enabled() Configuration { return Configuration{ObjectLockEnabled: "Enabled"} }

// Parse reads a PutObjectLockConfiguration body as S3 checks it.
func Parse(body []byte) (Configuration, error) {
	var c Configuration
	if err := decodeOne(body, &c); err != nil {
		return Configuration{}, err
	}
	if c.ObjectLockEnabled != "Enabled" {
		return Configuration{}, malformed()
	}
	if c.Rule == nil {
		return c, nil
	}
	d := c.Rule.DefaultRetention
	switch {
	case d.Mode != Governance && d.Mode != Compliance:
		return Configuration{}, malformed()
	case d.Days != 0 && d.Years != 0:
		return Configuration{}, malformed()
	case d.Days < 0 || d.Years < 0 || (d.Days == 0 && d.Years == 0):
		return Configuration{}, &Error{Code: "InvalidArgument", Message: "Default retention period must be a positive integer value."}
	case d.Days > maxDays || d.Years > maxYears:
		return Configuration{}, &Error{Code: "InvalidArgument", Message: "Default retention period too large."}
	}
	return c, nil
}

// Default is the retention a version written at now gets from the
// bucket's configuration, false when it sets none.
func (c Configuration) Default(now time.Time) (Retention, bool) {
	if c.Rule == nil {
		return Retention{}, false
	}
	d := c.Rule.DefaultRetention
	return Retention{Mode: d.Mode, Until: now.AddDate(d.Years, 0, d.Days).UTC()}, true
}

// Retention is a version's retention (S3's Retention element).
type Retention struct {
	XMLName xml.Name  `xml:"Retention"`
	Mode    Mode      `xml:"Mode,omitempty"`
	Until   time.Time `xml:"RetainUntilDate,omitempty"`
}

// ParseRetention reads a PutObjectRetention body. An empty Retention
// removes a governance retention (with the bypass); a mode needs a date.
func ParseRetention(body []byte) (Retention, error) {
	var r Retention
	if err := decodeOne(body, &r); err != nil {
		return Retention{}, err
	}
	switch {
	case r.Mode == "" && r.Until.IsZero():
		return r, nil
	case r.Mode != Governance && r.Mode != Compliance, r.Until.IsZero():
		return Retention{}, malformed()
	}
	r.Until = r.Until.UTC()
	return r, nil
}

// LegalHold is S3's LegalHold element.
type LegalHold struct {
	XMLName xml.Name `xml:"LegalHold"`
	Status  string   `xml:"Status"`
}

// ParseLegalHold reads a PutObjectLegalHold body: ON or OFF.
func ParseLegalHold(body []byte) (bool, error) {
	var h LegalHold
	if err := decodeOne(body, &h); err != nil {
		return false, err
	}
	switch h.Status {
	case "ON":
		return true, nil
	case "OFF":
		return false, nil
	}
	return false, malformed()
}

// State is a version's lock state as its record holds it.
type State struct {
	Retention Retention // zero Mode: none
	LegalHold bool
	// HoldSet: a legal hold was ever set, ON or OFF (S3 then reports
	// OFF rather than no legal hold).
	HoldSet bool
}

// StateOf reads the lock state from a record's headers.
func StateOf(headers map[string]string) State {
	var s State
	if m := Mode(headers[ModeHeader]); m == Governance || m == Compliance {
		if t, err := time.Parse(time.RFC3339, headers[UntilHeader]); err == nil {
			s.Retention = Retention{Mode: m, Until: t.UTC()}
		}
	}
	s.LegalHold = headers[LegalHoldHeader] == "ON"
	_, s.HoldSet = headers[LegalHoldHeader]
	return s
}

// Apply writes the state into a record's headers, removing what it
// does not set.
func (s State) Apply(headers map[string]string) {
	delete(headers, ModeHeader)
	delete(headers, UntilHeader)
	delete(headers, LegalHoldHeader)
	if s.Retention.Mode != "" {
		headers[ModeHeader] = string(s.Retention.Mode)
		headers[UntilHeader] = s.Retention.Until.UTC().Format(time.RFC3339)
	}
	switch {
	case s.LegalHold:
		headers[LegalHoldHeader] = "ON"
	case s.HoldSet:
		headers[LegalHoldHeader] = "OFF"
	}
}

// Retained reports whether the retention still holds at now.
func (r Retention) Retained(now time.Time) bool { return r.Mode != "" && now.Before(r.Until) }

// CheckDelete decides whether a version in state s may be deleted (or
// overwritten) at now; bypass is x-amz-bypass-governance-retention.
func CheckDelete(s State, now time.Time, bypass bool) error {
	switch {
	case s.LegalHold:
		return denied()
	case !s.Retention.Retained(now):
		return nil
	case s.Retention.Mode == Governance && bypass:
		return nil
	}
	return denied()
}

// CheckRetention decides whether a version's retention may change from
// old to next at now: extending is always allowed; shortening, removing
// or changing the mode of a governance retention needs the bypass; a
// compliance retention can only be extended.
func CheckRetention(old, next Retention, now time.Time, bypass bool) error {
	if !old.Retained(now) {
		return nil
	}
	keeps := next.Mode == old.Mode && !next.Until.Before(old.Until)
	switch {
	case keeps:
		return nil
	case old.Mode == Governance && bypass:
		return nil
	}
	return denied()
}

func denied() error {
	return &Error{Code: "AccessDenied", Message: "Access Denied because object protected by object lock."}
}

// decodeOne decodes body as exactly one XML element into v.
func decodeOne(body []byte, v any) error {
	d := xml.NewDecoder(bytes.NewReader(body))
	if err := d.Decode(v); err != nil {
		return malformed()
	}
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		cd, ok := tok.(xml.CharData)
		if err != nil || !ok || len(bytes.TrimSpace(cd)) != 0 {
			return malformed()
		}
	}
}
