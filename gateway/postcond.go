package gateway

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"sort"
	"strings"
	"time"

	"tessera/object"
)

// A POST upload's policy document: its expiration and the conditions
// every form field must meet. Each failure is answered with S3's message
// for it (clients and people match them as text): a document S3 cannot
// read is 400 InvalidPolicyDocument, a form the policy does not allow
// 403 AccessDenied.

// postPolicy is a decoded, unexpired policy document.
type postPolicy struct {
	conds            []policyCond
	minSize, maxSize int64
}

// policyCond is one eq or starts-with condition.
type policyCond struct {
	op    string // "eq" or "starts-with"
	field string // the form field, lowercase; "" for a literal
	// literal is what a condition naming no field ("content-type"
	// without its "$") compares: itself.
	literal string
	value   string
	text    string // the condition as S3 quotes it when it fails
}

func badPolicy(format string, args ...any) error {
	return apiErrf(errInvalidPolicyDocument, "Invalid Policy: "+format, args...)
}

func policyDenied(format string, args ...any) error {
	return apiErrf(errAccessDenied, "Invalid according to Policy: "+format, args...)
}

func errPolicyJSON() error { return badPolicy("Invalid JSON.") }

// parsePolicy decodes the base64 policy field and checks its expiration
// against now, after its structure: S3 reports a malformed document even
// when it has expired.
func parsePolicy(b64 string, now time.Time) (postPolicy, error) {
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return postPolicy{}, badPolicy("invalid Base64 encoding.")
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return postPolicy{}, badPolicy("Expecting '{' but found End-of-Input")
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		return postPolicy{}, errPolicyJSON()
	}
	exp, err := policyExpiration(doc)
	if err != nil {
		return postPolicy{}, err
	}
	p, err := policyConditions(doc["conditions"])
	if err != nil {
		return postPolicy{}, err
	}
	if now.After(exp) {
		return postPolicy{}, policyDenied("Policy expired.")
	}
	return p, nil
}

// policyExpiration checks the document's members and returns its
// expiration.
func policyExpiration(doc map[string]json.RawMessage) (time.Time, error) {
	names := make([]string, 0, len(doc))
	for name := range doc {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if name != "expiration" && name != "conditions" {
			return time.Time{}, badPolicy("Unexpected: %s", jsonText(clipText(name, 64)))
		}
	}
	raw, ok := doc["expiration"]
	if !ok {
		return time.Time{}, badPolicy("Policy missing expiration.")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return time.Time{}, errPolicyJSON()
	}
	exp, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, badPolicy("Invalid 'expiration' value: '%s'", clipText(s, 64))
	}
	return exp, nil
}

func policyConditions(raw json.RawMessage) (postPolicy, error) {
	if raw == nil {
		return postPolicy{}, badPolicy("Policy missing conditions.")
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return postPolicy{}, badPolicy("Invalid 'conditions' value: must be a List.")
	}
	p := postPolicy{minSize: 0, maxSize: object.MaxPutSize}
	for _, c := range list {
		if err := p.add(bytes.TrimSpace(c)); err != nil {
			return postPolicy{}, err
		}
	}
	return p, nil
}

// add parses one condition: a List (["op", "$field", "value"] or
// ["content-length-range", min, max]) or an Object of one field.
func (p *postPolicy) add(c json.RawMessage) error {
	switch {
	case len(c) > 0 && c[0] == '[':
		return p.addList(c)
	case len(c) > 0 && c[0] == '{':
		return p.addSimple(c)
	}
	return badPolicy("Invalid condition test: must be a List or Object.")
}

func (p *postPolicy) addSimple(c json.RawMessage) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(c, &m); err != nil {
		return errPolicyJSON()
	}
	if len(m) != 1 {
		return badPolicy("Invalid Simple-Condition: Simple-Conditions must have exactly one property specified.")
	}
	for k, raw := range m {
		var v string
		if err := json.Unmarshal(raw, &v); err != nil {
			return badPolicy("Invalid Simple-Condition: value must be a string.")
		}
		name := strings.TrimPrefix(k, "$")
		// S3 quotes an Object condition in the List form it stands for.
		text := "[" + jsonText("eq") + ", " + jsonText("$"+name) + ", " + jsonText(v) + "]"
		p.conds = append(p.conds, policyCond{op: "eq", field: strings.ToLower(name), value: v, text: text})
	}
	return nil
}

func (p *postPolicy) addList(c json.RawMessage) error {
	var list []json.RawMessage
	if err := json.Unmarshal(c, &list); err != nil {
		return errPolicyJSON()
	}
	if len(list) == 0 {
		return badPolicy("Invalid Condition: missing operation identifier.")
	}
	var op string
	if err := json.Unmarshal(list[0], &op); err != nil {
		return errPolicyJSON()
	}
	lop := strings.ToLower(op)
	if lop != "eq" && lop != "starts-with" && lop != "content-length-range" {
		return badPolicy("Invalid Condition: unknown operation '%s'.", clipText(op, 64))
	}
	if len(list) != 3 {
		return badPolicy("Invalid %s: wrong number of arguments.", op)
	}
	if lop == "content-length-range" {
		return p.addRange(list[1], list[2])
	}
	var field, value string
	if json.Unmarshal(list[1], &field) != nil || json.Unmarshal(list[2], &value) != nil {
		return errPolicyJSON()
	}
	// S3 quotes a failed condition with its terms spaced, whatever the
	// document's own spacing (minio-go's suite matches it as text).
	cond := policyCond{op: lop, value: value, text: "[" + jsonText(op) + ", " + jsonText(field) + ", " + jsonText(value) + "]"}
	if name, ok := strings.CutPrefix(field, "$"); ok {
		cond.field = strings.ToLower(name)
	} else {
		cond.literal = field
	}
	p.conds = append(p.conds, cond)
	return nil
}

func (p *postPolicy) addRange(loRaw, hiRaw json.RawMessage) error {
	var lo, hi int64
	if json.Unmarshal(loRaw, &lo) != nil || json.Unmarshal(hiRaw, &hi) != nil || lo < 0 {
		return errPolicyJSON()
	}
	if hi < lo {
		return badPolicy("Invalid content-length-range: the minimum exceeds the maximum.")
	}
	p.minSize, p.maxSize = lo, hi
	return nil
}

// jsonText is s as a JSON string, with <, > and & as they are.
func jsonText(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// clipText bounds client text echoed into messages.
func clipText(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// exemptField reports whether a form field needs no policy condition.
func exemptField(name string) bool {
	switch name {
	case "policy", "x-amz-signature", "signature", "awsaccesskeyid", "file":
		return true
	}
	return strings.HasPrefix(name, "x-ignore-")
}

// check matches the form against every condition and requires every
// field to be covered by one, as S3 does. key is the object key, with
// ${filename} replaced.
func (p postPolicy) check(fields map[string]string, bucket, key string) error {
	covered := map[string]bool{}
	for _, c := range p.conds {
		covered[c.field] = true
		got := c.literal
		switch c.field {
		case "":
		case "bucket":
			got = bucket
		case "key":
			got = key
		default:
			got = fields[c.field]
		}
		if !c.holds(got) {
			return policyDenied("Policy Condition failed: %s", c.text)
		}
	}
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !exemptField(name) && !covered[name] {
			return policyDenied("Extra input fields: %s", name)
		}
	}
	return nil
}

// holds reports whether got meets the condition. A Content-Type may list
// several types, separated by commas: starts-with must hold for each.
func (c policyCond) holds(got string) bool {
	if c.op == "eq" {
		return got == c.value
	}
	if c.field != "content-type" {
		return strings.HasPrefix(got, c.value)
	}
	for _, t := range strings.Split(got, ",") {
		if !strings.HasPrefix(strings.TrimSpace(t), c.value) {
			return false
		}
	}
	return true
}
