package meta

import (
	"strings"
	"unicode/utf8"
)

// CommonPrefix is the common prefix key folds into in a listing of prefix
// with delimiter: prefix, then key up to and including the first delimiter
// after it; "" when key does not fold (no delimiter, or none after prefix).
func CommonPrefix(key, prefix, delimiter string) string {
	if delimiter == "" || !strings.HasPrefix(key, prefix) {
		return ""
	}
	i := strings.Index(key[len(prefix):], delimiter)
	if i < 0 {
		return ""
	}
	return key[:len(prefix)+i+len(delimiter)]
}

// PastPrefix is a key that sorts after every key under the common prefix
// cp that a listing can reach in one seek: U+10FFFF sorts after every
// character a key can continue with and, unlike a raw 0xFF byte, survives
// any text encoding on the way between nodes.
func PastPrefix(cp string) string { return cp + string(utf8.MaxRune) }

// foldBatch is how many entries FoldEntries asks scan for after a seek:
// one, since the key there usually starts the next common prefix and is
// live. The batch doubles while scans find only keys that do not fold or
// tombstones.
const foldBatch = 1

// FoldEntries lists up to limit entries after `after` under prefix, like
// scan (which returns up to n entries with key > after and the prefix, in
// key order, tombstones included), but folds every common prefix of
// delimiter: of the keys under one common prefix it returns those up to
// and including the first live one, marks that one Folded, and seeks past
// the rest. A listing merged from several holders needs the tombstones
// before it to decide whether that key is live; the keys after it it may
// not need at all. A short result means the listing is complete.
func FoldEntries(scan func(after string, n int) []Entry, prefix, delimiter, after string, limit int) []Entry {
	out := make([]Entry, 0, min(limit, 64))
	batch, folded := foldBatch, ""
	for len(out) < limit {
		n := min(batch, limit-len(out))
		es := scan(after, n)
		seeked := false
		for _, e := range es {
			after = e.Key
			cp := CommonPrefix(e.Key, prefix, delimiter)
			if cp != "" && cp == folded {
				continue // past the seek target, still under the folded prefix
			}
			out = append(out, e)
			if cp != "" && !e.Deleted {
				out[len(out)-1].Folded = true
				folded, after, seeked = cp, max(after, PastPrefix(cp)), true
				break
			}
			if len(out) == limit {
				return out
			}
		}
		switch {
		case seeked:
			batch = foldBatch
		case len(es) < n:
			return out
		default:
			batch = min(2*batch, 1024)
		}
	}
	return out
}
