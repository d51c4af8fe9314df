package gateway

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"strings"
)

// S3's limits on a CORS configuration.
const (
	s3Namespace  = "http://s3.amazonaws.com/doc/2006-03-01/"
	maxCORSRules = 100
	maxCORSID    = 255
)

// corsConfig is the PutBucketCors body and GetBucketCors answer. Stored
// configurations are re-encoded from this type, so what GET returns is
// what validation accepted.
type corsConfig struct {
	XMLName xml.Name   `xml:"CORSConfiguration"`
	Xmlns   string     `xml:"xmlns,attr,omitempty"`
	Rules   []corsRule `xml:"CORSRule"`
}

type corsRule struct {
	ID             string   `xml:"ID,omitempty"`
	AllowedHeaders []string `xml:"AllowedHeader"`
	AllowedMethods []string `xml:"AllowedMethod"`
	AllowedOrigins []string `xml:"AllowedOrigin"`
	ExposeHeaders  []string `xml:"ExposeHeader"`
	MaxAgeSeconds  *int     `xml:"MaxAgeSeconds,omitempty"`
}

var corsMethods = map[string]bool{
	http.MethodGet: true, http.MethodPut: true, http.MethodPost: true,
	http.MethodDelete: true, http.MethodHead: true,
}

// parseCORS decodes and validates a CORS configuration the way S3 does:
// structural problems are MalformedXML, unsupported values InvalidRequest.
func parseCORS(body []byte) (*corsConfig, error) {
	var c corsConfig
	if err := xml.NewDecoder(bytes.NewReader(body)).Decode(&c); err != nil {
		return nil, apiErr(errMalformedXML)
	}
	if c.XMLName.Local != "CORSConfiguration" || len(c.Rules) == 0 || len(c.Rules) > maxCORSRules {
		return nil, apiErr(errMalformedXML)
	}
	for i := range c.Rules {
		if err := c.Rules[i].validate(); err != nil {
			return nil, err
		}
	}
	c.Xmlns = s3Namespace
	return &c, nil
}

func (r *corsRule) validate() error {
	if len(r.AllowedMethods) == 0 || len(r.AllowedOrigins) == 0 {
		return apiErr(errMalformedXML)
	}
	if len(r.ID) > maxCORSID {
		return apiErrf(errInvalidRequest, "The ID of a CORSRule can not be longer than 255 characters.")
	}
	// A negative MaxAgeSeconds is accepted and given back as sent, as S3
	// does; browsers treat it as "do not cache".
	for i, m := range r.AllowedMethods {
		r.AllowedMethods[i] = strings.TrimSpace(m)
		if !corsMethods[r.AllowedMethods[i]] {
			return apiErrf(errInvalidRequest, "Found unsupported HTTP method in CORS config. Unsupported method is %s", m)
		}
	}
	for i, o := range r.AllowedOrigins {
		r.AllowedOrigins[i] = strings.TrimSpace(o)
		if strings.Count(o, "*") > 1 {
			return apiErrf(errInvalidRequest, `AllowedOrigin "%s" can not have more than one wildcard.`, o)
		}
	}
	for i, h := range r.AllowedHeaders {
		r.AllowedHeaders[i] = strings.TrimSpace(h)
		if err := checkCORSHeader(r.AllowedHeaders[i], h); err != nil {
			return err
		}
		if strings.Count(h, "*") > 1 {
			return apiErrf(errInvalidRequest, `AllowedHeader "%s" can not have more than one wildcard.`, h)
		}
	}
	for i, h := range r.ExposeHeaders {
		r.ExposeHeaders[i] = strings.TrimSpace(h)
		if strings.Contains(h, "*") {
			return apiErrf(errInvalidRequest, `ExposeHeader "%s" contains wildcard. We currently do not support wildcard for ExposeHeader.`, h)
		}
		if err := checkCORSHeader(r.ExposeHeaders[i], h); err != nil {
			return err
		}
	}
	return nil
}

// checkCORSHeader refuses a configured header name that is not an HTTP
// token. The message names AllowedHeader for ExposeHeader values too:
// that is the text versitygw's suite expects for both.
func checkCORSHeader(name, sent string) error {
	if name != "" && !isToken(name) {
		return apiErrf(errInvalidRequest, `AllowedHeader "%s" contains invalid character.`, sent)
	}
	return nil
}

// isToken reports whether s is an HTTP token (RFC 9110 section 5.6.2),
// the syntax of a header name.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
