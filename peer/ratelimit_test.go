package peer

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tessera/meta"
)

// sliceLog records, in order, which stream each written slice came from.
type sliceLog struct {
	mu  sync.Mutex
	log []string
}

func (s *sliceLog) writer(name string) *namedWriter { return &namedWriter{s: s, name: name} }

func (s *sliceLog) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.log, "")
}

func (s *sliceLog) count(name string) int {
	return strings.Count(s.String(), name)
}

type namedWriter struct {
	s    *sliceLog
	name string
}

func (w *namedWriter) Write(p []byte) (int, error) {
	w.s.mu.Lock()
	w.s.log = append(w.s.log, w.name)
	w.s.mu.Unlock()
	return len(p), nil
}

const slice = 8 << 10

// stream writes n slices through the link as one stream.
func stream(t *testing.T, l *link, w *namedWriter, prio int64, n int, wg *sync.WaitGroup) {
	t.Helper()
	lw := &limitedWriter{ctx: context.Background(), w: w, l: l, prio: prio, start: l.now()}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range n {
			if _, err := lw.Write(make([]byte, slice)); err != nil {
				t.Error(err)
				return
			}
		}
	}()
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// A small read's stream overtakes a large one already sending.
func TestLinkSendsSmallerReadsFirst(t *testing.T) {
	l := newLink(100*slice, time.Now) // 10 ms a slice
	var log sliceLog
	var wg sync.WaitGroup
	stream(t, l, log.writer("L"), 1<<40, 30, &wg)
	waitFor(t, "the large stream to start", func() bool { return log.count("L") >= 3 })
	stream(t, l, log.writer("s"), 1000, 6, &wg)
	wg.Wait()
	got := log.String()
	first, last := strings.Index(got, "s"), strings.LastIndex(got, "s")
	// Shared, L would take every other slice; ordered, none but a slice
	// granted while s was between two writes (a busy machine may pause
	// its goroutine for a slice's time).
	if between := strings.Count(got[first:last], "L"); between > 2 {
		t.Fatalf("the small stream was interleaved with %d slices of the large one: %s", between, got)
	}
}

// Untagged streams take turns, as on a plain NIC.
func TestLinkUntaggedStreamsShare(t *testing.T) {
	l := newLink(100*slice, time.Now)
	var log sliceLog
	var wg sync.WaitGroup
	stream(t, l, log.writer("a"), 0, 12, &wg)
	stream(t, l, log.writer("b"), 0, 12, &wg)
	wg.Wait()
	got := log.String()
	// Once both are sending, neither runs four slices in a row.
	both := max(strings.Index(got, "a"), strings.Index(got, "b"))
	tail := got[both : len(got)-4] // the last slices of the longer one may run alone
	if strings.Contains(tail, "aaaa") || strings.Contains(tail, "bbbb") {
		t.Fatalf("streams did not take turns: %s", got)
	}
}

// An old stream of a large read beats a new stream of a smaller one once
// it has waited long enough: aging keeps large reads from starving.
func TestLinkAgesWaitingStreams(t *testing.T) {
	now := time.Unix(1000, 0)
	l := newLink(1e6, func() time.Time { return now })
	old := l.key(20_000, now)
	young := l.key(1_000, now.Add(200*time.Millisecond)) // 1000 + 0.25 x 1e6 x 0.2 = 51000
	if old >= young {
		t.Fatalf("old key %g should beat young %g", old, young)
	}
}

// Untagged streams still move while tagged ones wait.
func TestLinkUntaggedKeepsATurn(t *testing.T) {
	l := newLink(400*slice, time.Now)
	var log sliceLog
	var wg sync.WaitGroup
	stream(t, l, log.writer("T"), 1000, 60, &wg)
	waitFor(t, "the tagged stream to start", func() bool { return log.count("T") >= 2 })
	stream(t, l, log.writer("u"), 0, 3, &wg)
	wg.Wait()
	got := log.String()
	if i := strings.LastIndex(got, "u"); i < 0 || strings.Count(got[:i], "T") > 2+3*plainEvery {
		t.Fatalf("the untagged stream waited too long: %s", got)
	}
}

func TestLimitedWriterDeliversAndStops(t *testing.T) {
	var buf bytes.Buffer
	p := newSendPacer(SendLimit{Rate: 1e9})
	w, err := p.writer(context.Background(), &buf, 0)
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("x"), 3*sendBurst+5)
	if n, err := w.Write(data); err != nil || n != len(data) || !bytes.Equal(buf.Bytes(), data) {
		t.Fatalf("wrote %d, %v", n, err)
	}

	// A stream waiting behind another gives up with its ctx and leaves
	// the link to the rest.
	slow := newSendPacer(SendLimit{Rate: 1000})
	var log sliceLog
	var wg sync.WaitGroup
	stream(t, slow.l, log.writer("x"), 0, 1, &wg) // spends the credit: the next slice waits ~8 s
	wg.Wait()
	ctx, cancel := context.WithCancel(context.Background())
	w, _ = slow.writer(ctx, &buf, 5)
	errc := make(chan error, 1)
	go func() { _, err := w.Write(data); errc <- err }()
	waitFor(t, "the writer to queue", func() bool {
		slow.l.mu.Lock()
		defer slow.l.mu.Unlock()
		return len(slow.l.tagged) == 1
	})
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if n := len(slow.l.tagged); n != 0 {
		t.Fatalf("%d waiters left on the link", n)
	}

	delayed := newSendPacer(SendLimit{Delay: time.Hour})
	if _, err := delayed.writer(ctx, &buf, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("delay should end with ctx: %v", err)
	}
	var nilPacer *sendPacer
	if w, err := nilPacer.writer(ctx, &buf, 0); err != nil || w != &buf {
		t.Fatal("nil pacer must pass the writer through")
	}
}

// Over HTTP: of two equal shard reads started together behind a large
// untagged one, the one whose context carries a read priority is sent
// first; the other has had little of its body when the first is done.
func TestReadPriorityReachesTheLink(t *testing.T) {
	p := newPeerWith(t, ServerConfig{SendLimit: SendLimit{Rate: 4 << 20}})
	c := p.client
	mkBucket(t, c, "prio")
	const small = 512 << 10
	big := putObject(t, c, "prio", "big", stamp(1, "gw"), make([]byte, 4<<20))
	tagged := putObject(t, c, "prio", "tagged", stamp(2, "gw"), make([]byte, small))
	plain := putObject(t, c, "prio", "plain", stamp(3, "gw"), make([]byte, small))

	open := func(ctx context.Context, o *meta.Object) io.ReadCloser {
		rc, err := c.ReadShard(ctx, "prio", o.Key, o.Stamp, 1, 0, -1)
		if err != nil {
			t.Fatal(err)
		}
		return rc
	}
	bigBody := open(ctx, big)
	defer bigBody.Close()
	go io.Copy(io.Discard, bigBody) //nolint:errcheck // drained to keep the link busy
	time.Sleep(50 * time.Millisecond)

	var plainRead atomic.Int64
	plainBody := open(ctx, plain)
	defer plainBody.Close()
	plainDone := make(chan struct{})
	go func() {
		defer close(plainDone)
		buf := make([]byte, 4096)
		for {
			n, err := plainBody.Read(buf)
			plainRead.Add(int64(n))
			if err != nil {
				return
			}
		}
	}()
	taggedBody := open(meta.WithReadPriority(ctx, small), tagged)
	if n, err := io.Copy(io.Discard, taggedBody); err != nil || n != small {
		t.Fatalf("tagged read: %d bytes, %v", n, err)
	}
	taggedBody.Close()
	if got := plainRead.Load(); got > small/2 {
		t.Fatalf("the untagged read had %d of %d bytes when the tagged one finished: not sent first", got, small)
	}
	<-plainDone
	if got := plainRead.Load(); got != small {
		t.Fatalf("untagged read got %d bytes", got)
	}
}
