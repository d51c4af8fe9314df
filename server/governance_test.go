package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"tessera/meta"
	"tessera/object"
	"tessera/objectlock"
)

// A governance retention is enforced by the peers holding the version,
// not only by the gateway's check before the delete: through the object
// layer alone, with no gateway asking first, a delete is refused unless
// the caller's consent travels in the tombstone, and a legal hold or a
// compliance retention refuses it even then.
func TestGovernanceDecidedByThePeers(t *testing.T) {
	e := startTestEmbedded(t, zerolog.New(io.Discard))
	l := e.Gateway().layer
	ctx := context.Background()
	if err := l.MakeBucket(ctx, "gov"); err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(time.Hour)
	states := map[string]objectlock.State{
		"governance": {Retention: objectlock.Retention{Mode: objectlock.Governance, Until: until}},
		"compliance": {Retention: objectlock.Retention{Mode: objectlock.Compliance, Until: until}},
		"governance and hold": {Retention: objectlock.Retention{Mode: objectlock.Governance, Until: until},
			LegalHold: true, HoldSet: true},
	}
	for name, st := range states {
		for _, size := range []int{100, 3 << 20} { // inlined and sharded
			key := fmt.Sprintf("%s/%d", name, size)
			h := map[string]string{}
			st.Apply(h)
			data := bytes.Repeat([]byte("g"), size)
			if _, err := l.PutObject(ctx, "gov", key, bytes.NewReader(data), int64(size), object.PutOptions{Headers: h}); err != nil {
				t.Fatal(err)
			}
			if err := l.DeleteObject(ctx, "gov", key); !errors.Is(err, meta.ErrObjectLocked) {
				t.Fatalf("%s: delete without the bypass: %v, want the peers' refusal", key, err)
			}
			err := l.DeleteObjectWith(ctx, "gov", key, object.DeleteOptions{BypassGovernance: true})
			if bypassable := name == "governance"; bypassable != (err == nil) {
				t.Fatalf("%s: delete with the bypass: %v", key, err)
			}
			_, err = l.HeadObject(ctx, "gov", key)
			if gone := errors.Is(err, object.ErrObjectNotFound); gone != (name == "governance") {
				t.Fatalf("%s: after the deletes: %v", key, err)
			}
		}
	}
}
