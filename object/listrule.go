package object

import (
	"slices"

	"tessera/meta"
)

// listedVersion applies the read rule to the peers' listing lines of one
// key (one line per peer that lists it; failed is how many peers dropped
// out of the listing), so that a listing shows what a read would find.
// The newest stamp listed is the key's state unless too few peers list it
// to read it and the silent ones could not make up its write quorum: a
// write in flight, or one cut short between its commits. Such a version
// is passed over for the one before it, which the peers listing the newer
// one still keep while it is unsettled (Entry.Unsettled). A key whose
// every listed version is passed over comes back Deleted: nothing of it is
// readable, as a read would say. When none qualifies but there are older
// versions, the newest is kept, as reads of such a key fail rather than
// name one.
func (l *Layer) listedVersion(es []meta.Entry, failed int) meta.Entry {
	if len(es) == 0 {
		return meta.Entry{}
	}
	if sameStamp(es) {
		c := l.codeOfClass(es[0].StorageClass)
		if len(es) >= c.K || len(es)+failed >= c.WriteQuorum() {
			return es[0]
		}
		out := es[0]
		out.Deleted = true
		return out
	}
	byStamp := slices.Clone(es)
	slices.SortStableFunc(byStamp, func(a, b meta.Entry) int {
		switch {
		case b.Stamp.Less(a.Stamp):
			return -1
		case a.Stamp.Less(b.Stamp):
			return 1
		}
		return 0
	})
	newest := byStamp[0]
	keeping := 0 // peers listing a passed-over version that keep older ones
	for i := 0; i < len(byStamp); {
		j := i
		unsettled := 0
		for j < len(byStamp) && byStamp[j].Stamp == byStamp[i].Stamp {
			if byStamp[j].Unsettled {
				unsettled++
			}
			j++
		}
		c := l.codeOfClass(byStamp[i].StorageClass)
		if n := j - i; n+keeping >= c.K || (i == 0 && n+failed >= c.WriteQuorum()) {
			return byStamp[i]
		}
		keeping += unsettled
		i = j
	}
	return newest
}

func sameStamp(es []meta.Entry) bool {
	for _, e := range es[1:] {
		if e.Stamp != es[0].Stamp {
			return false
		}
	}
	return true
}

// codeOfClass is the code of a listed storage class, the default code for
// one this layer does not know.
func (l *Layer) codeOfClass(class string) meta.Code {
	if c, ok := l.classes[classOrStandard(class)]; ok {
		return c
	}
	return l.cfg.DefaultCode
}
