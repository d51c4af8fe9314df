package object

import (
	"sync/atomic"
	"testing"
	"time"
)

// While Unfinished says a drain is not done, settled passes go on every
// Retry (nothing else would trigger the pass that clears what a drained
// peer still holds); once it says done, the migrator idles.
func TestMigratorPassesWhileUnfinished(t *testing.T) {
	for _, unfinished := range []int{0, 2} {
		l, _ := newTestLayer(t)
		put(t, l, "k", randBytes(1, 300))
		var asked atomic.Int32
		m := NewMigrator(l, MigratorConfig{Retry: 10 * time.Millisecond, Unfinished: func() bool {
			return int(asked.Add(1)) <= unfinished
		}})
		m.Trigger(1)
		deadline := time.Now().Add(10 * time.Second)
		for int(asked.Load()) < unfinished+1 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond) // five Retry periods: any extra pass would run
		m.Close()
		st := m.Stats()
		if want := uint64(2 * (unfinished + 1)); st.Passes != want || st.Done != 1 || int(asked.Load()) != unfinished+1 {
			t.Fatalf("unfinished %d times: %d passes, done %d, asked %d; want %d passes, done 1, asked %d",
				unfinished, st.Passes, st.Done, asked.Load(), want, unfinished+1)
		}
	}
}
