package lifecycle

import (
	"testing"
	"time"

	"go.uber.org/goleak"

	"tessera/object"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A started worker runs passes on its own until Close, which stops it.
func TestWorkerStartClose(t *testing.T) {
	f := &fakeStore{
		config:  []byte(rules(`<Rule><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>`)),
		objects: map[string]object.ObjectInfo{"a": {Key: "a", ModTime: time.Unix(0, 0)}},
	}
	w := New(Config{Store: f, Interval: 10 * time.Millisecond})
	w.Start()
	defer w.Close()
	deadline := time.Now().Add(10 * time.Second)
	for len(f.keys()) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the started worker expired nothing in 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	w.Close()
	w.Close()
	if st := w.Stats(); st.Passes == 0 || st.Expired != 1 {
		t.Fatalf("stats %+v", st)
	}
}
