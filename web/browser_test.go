package web

import (
	"context"
	"math"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/rs/zerolog"
)

// movingSource is a synthetic status whose load figures change on every
// call, so sparklines and the latency chart have something to draw.
type movingSource struct {
	mu sync.Mutex
	st Status
	i  int
}

func (m *movingSource) Ready() error { return nil }

func (m *movingSource) Status() Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.i++
	st := m.st
	st.Nodes = append([]Node(nil), m.st.Nodes...)
	wave := func(k int) *float64 { v := 1 + math.Sin(float64(m.i+k)/2); return &v }
	for k := range st.Nodes {
		s, r := *st.Nodes[k].ThroughputSend**wave(k), *st.Nodes[k].ThroughputRecv**wave(k + 3)
		st.Nodes[k].ThroughputSend, st.Nodes[k].ThroughputRecv = &s, &r
	}
	p50, p95, p99 := 0.01**wave(0), 0.04**wave(1), 0.1**wave(2)
	st.Scheduler.GetP50, st.Scheduler.GetP95, st.Scheduler.GetP99 = &p50, &p95, &p99
	st.Time = time.Unix(1_800_000_000, 0).Add(time.Duration(m.i) * 2 * time.Second).UTC()
	return st
}

// browser starts headless Chromium for one test, or skips the test when
// none is installed.
func browser(t *testing.T, width, height int) context.Context {
	t.Helper()
	var path string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		t.Skip("chromium not installed: run .ci/web.sh (apt-get install chromium)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.Headless, chromedp.DisableGPU,
		chromedp.WindowSize(width, height), chromedp.UserDataDir(t.TempDir()))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() {
		cancelTimeout()
		cancelTab()
		cancelAlloc()
	})
	return ctx
}

// saveArtifact writes a test artifact under the repository's artifacts/.
func saveArtifact(t *testing.T, name string, b []byte) {
	t.Helper()
	dir := filepath.Join("..", "artifacts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("saved %s", filepath.Join(dir, name))
}

// TestWebPageSynthetic100 draws a 100-peer synthetic status at desktop
// and phone widths and checks what is on the page.
func TestWebPageSynthetic100(t *testing.T) {
	cases := []struct {
		name          string
		width, height int
		mobile        bool
	}{
		{"desktop", 1440, 1000, false},
		{"phone", 390, 844, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			errs := NewErrorLog(10)
			errs.Run(nil, zerolog.WarnLevel, "peer-006: shard fetch timed out")
			errs.Run(nil, zerolog.ErrorLevel, "repair peer-006: connection refused")
			ws, err := New(Config{Source: &movingSource{st: Synthetic(100, 4)}, Public: true, Errors: errs,
				SampleEvery: 50 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(ws)
			defer func() {
				ts.Close()
				_ = ws.Close()
			}()
			time.Sleep(time.Second) // some history samples
			ctx := browser(t, tc.width, tc.height)
			var vp []chromedp.EmulateViewportOption
			if tc.mobile {
				vp = append(vp, chromedp.EmulateMobile)
			}
			if err := chromedp.Do(ctx,
				chromedp.EmulateViewport(int64(tc.width), int64(tc.height), vp...),
				chromedp.Navigate(ts.URL+"/"),
			); err != nil {
				t.Fatal(err)
			}
			if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`Number(document.body.dataset.updates) >= 2`,
				chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(30*time.Second))); err != nil {
				t.Fatalf("page never updated twice: %v", err)
			}
			type counts struct {
				Rows, Peers, Dead, Suspect, RingRows, SchedRows, Sparks, Bands, Buckets, Dashes, Upgrades int
				Policy, Lifecycle                                                                         string
				Overflow, SignOut                                                                         bool
			}
			got, err := chromedp.Run(ctx, chromedp.Evaluate[counts](`(() => {
				const q = (s) => document.querySelectorAll(s).length;
				return {
					Rows: q('#nodes tbody tr[data-node]'),
					Peers: q('#nodes tbody tr[data-node^="peer-"]'),
					Dead: q('#nodes tbody tr[data-state="dead"]'),
					Suspect: q('#nodes tbody tr[data-state="suspect"]'),
					RingRows: q('#ring-peers tbody tr[data-peer]'),
					SchedRows: q('#sched-peers tbody tr[data-peer]'),
					Sparks: q('#nodes svg.spark polyline'),
					Bands: q('#ring-peers svg.pbar rect.band'),
					Buckets: q('#bucket-list tr[data-bucket]'),
					Upgrades: q('#jobs-body .job[data-job="index upgrade /data/peer-007"] .bar'),
					Dashes: [...document.querySelectorAll('#nodes tr[data-node] td')].filter(td => td.parentElement.dataset.node.startsWith('peer-') && td.textContent.includes('—')).length,
					Policy: document.querySelector('#sched-summary [data-k="policy"]').textContent,
					Lifecycle: (document.querySelector('#jobs-body .job[data-job="lifecycle"]') || {}).textContent || "",
					Overflow: document.documentElement.scrollWidth > window.innerWidth + 1,
					SignOut: !document.getElementById("logout").hidden,
				};
			})()`))
			if err != nil {
				t.Fatal(err)
			}
			st := Synthetic(100, 4)
			var dead, suspect int
			for _, n := range st.Nodes {
				switch n.State {
				case "dead":
					dead++
				case "suspect":
					suspect++
				}
			}
			if got.Rows != 101 || got.Peers != 100 || got.Dead != dead || got.Suspect != suspect {
				t.Errorf("nodes table: %d rows, %d peers, %d dead, %d suspect; want 101, 100, %d, %d",
					got.Rows, got.Peers, got.Dead, got.Suspect, dead, suspect)
			}
			if got.RingRows != 100 || got.Bands != 100 || got.SchedRows != 100 {
				t.Errorf("ring rows %d (bands %d), scheduler rows %d; want 100 each", got.RingRows, got.Bands, got.SchedRows)
			}
			if got.Sparks < 100 {
				t.Errorf("%d sparklines drawn, want at least one per node", got.Sparks)
			}
			if got.Buckets != len(st.Buckets.Buckets) {
				t.Errorf("%d buckets drawn, want %d", got.Buckets, len(st.Buckets.Buckets))
			}
			if got.Upgrades != 1 {
				t.Errorf("%d index upgrades drawn with a progress bar, want 1", got.Upgrades)
			}
			if got.Dashes != 0 {
				t.Errorf("%d node cells show — though every figure is filled", got.Dashes)
			}
			for _, want := range []string{"objects expired48,213", "uploads aborted17", "passes12"} {
				if !strings.Contains(got.Lifecycle, want) {
					t.Errorf("lifecycle card %q lacks %q", got.Lifecycle, want)
				}
			}
			if got.Policy != "policyeta" {
				t.Errorf("policy cell %q", got.Policy)
			}
			if got.Overflow {
				t.Error("the page scrolls sideways: it does not fit the screen width")
			}
			if got.SignOut {
				t.Error("Sign out shown on a public page, which has no session to end")
			}
			png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatal(err)
			}
			saveArtifact(t, "status-synthetic-100-"+tc.name+".png", png)
		})
	}
}
