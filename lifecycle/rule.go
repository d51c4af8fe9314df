package lifecycle

import (
	"strings"
	"time"
)

// Object is what a rule looks at: the current version of a key.
type Object struct {
	Key     string
	Size    int64
	ModTime time.Time
	Tags    map[string]string
}

// filterTags are the tags a rule's filter requires.
func (r *Rule) filterTags() []Tag {
	switch {
	case r.Filter == nil:
		return nil
	case r.Filter.Tag != nil:
		return []Tag{*r.Filter.Tag}
	case r.Filter.And != nil:
		return r.Filter.And.Tags
	}
	return nil
}

// prefix is the key prefix the rule requires ("" for any).
func (r *Rule) prefix() string {
	switch {
	case r.Prefix != nil:
		return *r.Prefix
	case r.Filter == nil:
		return ""
	case r.Filter.Prefix != nil:
		return *r.Filter.Prefix
	case r.Filter.And != nil && r.Filter.And.Prefix != nil:
		return *r.Filter.And.Prefix
	}
	return ""
}

// sizes are the rule's strict size bounds (nil: none).
func (r *Rule) sizes() (gt, lt *int64) {
	switch {
	case r.Filter == nil:
		return nil, nil
	case r.Filter.And != nil:
		return r.Filter.And.ObjectSizeGreaterThan, r.Filter.And.ObjectSizeLessThan
	}
	return r.Filter.ObjectSizeGreaterThan, r.Filter.ObjectSizeLessThan
}

// NeedsTags reports whether the rule's filter looks at object tags, which
// a listing does not carry.
func (r *Rule) NeedsTags() bool { return len(r.filterTags()) > 0 }

// Matches reports whether the rule's filter selects o.
func (r *Rule) Matches(o Object) bool { return r.matches(o, true) }

// matches is Matches, looking at tags only with tags.
func (r *Rule) matches(o Object, tags bool) bool {
	if !strings.HasPrefix(o.Key, r.prefix()) {
		return false
	}
	if gt, lt := r.sizes(); (gt != nil && o.Size <= *gt) || (lt != nil && o.Size >= *lt) {
		return false
	}
	if !tags {
		return true
	}
	for _, t := range r.filterTags() {
		if v, ok := o.Tags[t.Key]; !ok || v != t.Value {
			return false
		}
	}
	return true
}

// Clock is the time a configuration is evaluated at and the length of a
// lifecycle day: 24 hours, except in tests, which shorten it.
type Clock struct {
	Now time.Time
	Day time.Duration
}

// after is t plus n days, rounded up to the next day boundary (midnight
// UTC for 24-hour days), as S3 counts lifecycle days.
func (c Clock) after(t time.Time, n int) time.Time {
	at := t.Add(time.Duration(n) * c.Day)
	if r := at.Truncate(c.Day); !r.Equal(at) {
		return r.Add(c.Day)
	}
	return at
}

// Expires reports whether an enabled rule's Expiration deletes o now.
func (r *Rule) Expires(o Object, c Clock) bool { return r.expires(o, c, true) }

// expires is Expires, looking at tags only with tags.
func (r *Rule) expires(o Object, c Clock, tags bool) bool {
	e := r.Expiration
	if r.Status != "Enabled" || e == nil || !r.matches(o, tags) {
		return false
	}
	switch {
	case e.Days != nil:
		return !c.Now.Before(c.after(o.ModTime, *e.Days))
	case e.Date != nil:
		d, err := time.Parse(time.RFC3339, *e.Date)
		return err == nil && !c.Now.Before(d)
	}
	return false // ExpiredObjectDeleteMarker: delete markers only
}

// Aborts reports whether an enabled rule aborts an upload of key begun
// at initiated.
func (r *Rule) Aborts(key string, initiated time.Time, c Clock) bool {
	a := r.AbortIncompleteMultipartUpload
	if r.Status != "Enabled" || a == nil || a.DaysAfterInitiation == nil || !strings.HasPrefix(key, r.prefix()) {
		return false
	}
	return !c.Now.Before(c.after(initiated, *a.DaysAfterInitiation))
}

// ExpiresNoncurrent reports whether an enabled rule's
// NoncurrentVersionExpiration removes o, a version that became noncurrent
// at since (when the next newer version was written), with newer
// noncurrent versions newer than it: it is past NoncurrentDays, and more
// than NewerNoncurrentVersions noncurrent versions are newer.
func (r *Rule) ExpiresNoncurrent(o Object, since time.Time, newer int, c Clock) bool {
	return r.expiresNoncurrent(o, since, newer, c, true)
}

func (r *Rule) expiresNoncurrent(o Object, since time.Time, newer int, c Clock, tags bool) bool {
	n := r.NoncurrentVersionExpiration
	if r.Status != "Enabled" || n == nil || !r.matches(o, tags) {
		return false
	}
	if n.NewerNoncurrentVersions != nil && newer < *n.NewerNoncurrentVersions {
		return false
	}
	if n.NoncurrentDays == nil {
		return n.NewerNoncurrentVersions != nil
	}
	return !c.Now.Before(c.after(since, *n.NoncurrentDays))
}

// RemovesMarker reports whether an enabled rule removes a delete marker
// of key that is its only version (ExpiredObjectDeleteMarker).
func (r *Rule) RemovesMarker(key string) bool {
	e := r.Expiration
	return r.Status == "Enabled" && e != nil && e.ExpiredObjectDeleteMarker != nil && *e.ExpiredObjectDeleteMarker &&
		strings.HasPrefix(key, r.prefix())
}
