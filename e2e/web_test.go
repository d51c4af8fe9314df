package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"
	"github.com/minio/minio-go/v7"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Known credentials, so the test can look for them where they must not be.
const (
	webAccessKey     = "WEBTESTACCESSKEY"
	webSecretKey     = "web-test-secret-key-never-shown-0123"
	webClusterSecret = "web-test-cluster-secret-never-shown-4567"
)

// webProc is one tessera process whose JSON log the test reads.
type webProc struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	stderr bytes.Buffer
	lines  []map[string]any
	stdout bytes.Buffer
}

// startWebProc runs the tessera binary with args, JSON logs and the test
// credentials in its environment, and stops it (SIGINT, then SIGKILL) when
// the test ends.
func startWebProc(t *testing.T, args ...string) *webProc {
	t.Helper()
	cmd := exec.Command(tesseraBinary(t), append(args, "--log-format", "json")...)
	cmd.Env = append(os.Environ(), "TESSERA_ACCESS_KEY="+webAccessKey, "TESSERA_SECRET_KEY="+webSecretKey,
		"TESSERA_CLUSTER_SECRET="+webClusterSecret)
	p := &webProc{cmd: cmd}
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = &webLockedWriter{mu: &p.mu, w: &p.stdout}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(errPipe)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			var m map[string]any
			_ = json.Unmarshal(sc.Bytes(), &m)
			p.mu.Lock()
			p.stderr.Write(sc.Bytes())
			p.stderr.WriteByte('\n')
			p.lines = append(p.lines, m)
			p.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		p.stop()
		<-read
	})
	return p
}

type webLockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *webLockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func (p *webProc) stop() {
	if p.cmd.ProcessState != nil {
		return
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}

// kill ends the process at once, as a crash would.
func (p *webProc) kill() {
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
}

// logField waits for a log line with message msg and returns its field.
func (p *webProc) logField(t *testing.T, msg, field string) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		p.mu.Lock()
		for _, l := range p.lines {
			if l["message"] == msg {
				v, _ := l[field].(string)
				p.mu.Unlock()
				return v
			}
		}
		p.mu.Unlock()
		if p.cmd.ProcessState != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no %q log line; stderr:\n%s", msg, p.output())
	return ""
}

func (p *webProc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String() + p.stdout.String()
}

// browser starts headless Chromium, or skips the test when none is
// installed.
func webBrowser(t *testing.T) context.Context {
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
		chromedp.WindowSize(1440, 1000), chromedp.UserDataDir(t.TempDir()))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() {
		cancelTimeout()
		cancelTab()
		cancelAlloc()
	})
	return ctx
}

// poll waits for a JavaScript expression to be true on the page.
func webPoll(t *testing.T, ctx context.Context, what, expr string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		// A poll does not survive a navigation (the login redirects):
		// start it again on the new document.
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(200*time.Millisecond),
			chromedp.WithPollingTimeout(time.Until(deadline))))
		if err == nil {
			return
		}
		// A navigation either ends the poll ("navigated") or destroys the
		// document's execution context under it ("Cannot find context").
		retry := strings.Contains(err.Error(), "navigated") || strings.Contains(err.Error(), "Cannot find context")
		if !retry || time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func webScreenshot(t *testing.T, ctx context.Context, name string, docs bool) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	dirs := []string{filepath.Join("..", "artifacts")}
	if docs {
		dirs = append(dirs, filepath.Join("..", "docs"))
	}
	for _, dir := range dirs {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("saved %s", filepath.Join(dir, name))
	}
}

// get fetches a URL with optional basic auth and returns status and body.
func webGet(t *testing.T, url string, basic bool) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if basic {
		req.SetBasicAuth(webAccessKey, webSecretKey)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// scrape parses /metrics with the Prometheus text parser.
func webScrape(t *testing.T, web string) map[string]*dto.MetricFamily {
	t.Helper()
	code, body := webGet(t, "http://"+web+"/metrics", false)
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return fams
}

// sum adds the values of a family's series whose labels include want.
func webSum(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	f, ok := fams[name]
	if !ok {
		return 0
	}
	var total float64
next:
	for _, m := range f.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if labels[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			total += m.Counter.GetValue()
		case m.Gauge != nil:
			total += m.Gauge.GetValue()
		case m.Histogram != nil:
			total += float64(m.Histogram.GetSampleCount())
		}
	}
	return total
}

// TestWebStatusPage runs `tessera server`, moves S3 traffic, checks that
// /metrics parses and its counters moved, then signs in on the page in
// headless Chromium and checks what it draws.
func TestWebStatusPage(t *testing.T) {
	webUnsetCABundle(t)
	ctx := webBrowser(t)
	dir := t.TempDir()
	p := startWebProc(t, "server", dir, "--address", "127.0.0.1:0", "--web-address", "127.0.0.1:0", "--log-level", "debug")
	web := p.logField(t, "gateway started", "web")
	s3 := p.logField(t, "gateway started", "s3")

	if code, _ := webGet(t, "http://"+web+"/health/live", false); code != http.StatusOK {
		t.Fatalf("/health/live: %d", code)
	}
	// The gateway listens before its peers have joined: ready must wait.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		code, body := webGet(t, "http://"+web+"/health/ready", false)
		if code == http.StatusOK {
			break
		}
		if code != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("/health/ready: %d %s", code, body)
		}
	}
	if code, _ := webGet(t, "http://"+web+"/api/status", false); code != http.StatusUnauthorized {
		t.Fatalf("/api/status without credentials: %d, want 401", code)
	}

	before := webScrape(t, web)
	mc, _ := newMinio(t, s3, webAccessKey, webSecretKey)
	bg := context.Background()
	if err := mc.MakeBucket(bg, "webtest", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	const objects, size = 3, 256 << 10
	for i := 0; i < objects; i++ {
		data := payload(int64(i), size)
		if _, err := mc.PutObject(bg, "webtest", fmt.Sprintf("obj-%d", i), bytes.NewReader(data), size, minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
		obj, err := mc.GetObject(bg, "webtest", fmt.Sprintf("obj-%d", i), minio.GetObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(obj)
		obj.Close()
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("get obj-%d: %v (%d bytes)", i, err, len(got))
		}
	}
	after := webScrape(t, web)
	checks := []struct {
		name   string
		labels map[string]string
		min    float64
	}{
		{"tessera_s3_requests_total", map[string]string{"operation": "PutObject", "status": "200"}, objects},
		{"tessera_s3_requests_total", map[string]string{"operation": "GetObject", "status": "200"}, objects},
		{"tessera_s3_requests_total", map[string]string{"operation": "CreateBucket"}, 1},
		{"tessera_s3_request_duration_seconds", map[string]string{"operation": "GetObject"}, objects},
		{"tessera_s3_received_bytes_total", map[string]string{"operation": "PutObject"}, objects * size},
		{"tessera_s3_sent_bytes_total", map[string]string{"operation": "GetObject"}, objects * size},
		{"tessera_sched_shard_fetches_total", nil, objects * 4},
	}
	for _, c := range checks {
		if d := webSum(after, c.name, c.labels) - webSum(before, c.name, c.labels); d < c.min {
			t.Errorf("%s%v moved by %v, want at least %v", c.name, c.labels, d, c.min)
		}
	}
	if got := webSum(after, "tessera_cluster_members", map[string]string{"role": "peer", "state": "alive"}); got != 6 {
		t.Errorf("tessera_cluster_members{peer,alive} = %v, want 6", got)
	}

	// Light GET traffic while the page is open, so the latency chart has
	// a few minutes' worth of shape in the screenshot.
	stop := make(chan struct{})
	var traffic sync.WaitGroup
	traffic.Add(1)
	go func() {
		defer traffic.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			if obj, err := mc.GetObject(bg, "webtest", fmt.Sprintf("obj-%d", i%objects), minio.GetObjectOptions{}); err == nil {
				_, _ = io.Copy(io.Discard, obj)
				obj.Close()
			}
		}
	}()
	defer traffic.Wait()
	var once sync.Once
	stopTraffic := func() { once.Do(func() { close(stop) }) }
	defer stopTraffic()

	// The page: the login form first (the body of a 401 whose Basic
	// challenge the browser has no keys for), then live data.
	webDismissAuthPrompts(t, ctx)
	if err := chromedp.Do(ctx, chromedp.Navigate("http://"+web+"/")); err != nil {
		t.Fatal(err)
	}
	webPoll(t, ctx, "the login form", `!!document.querySelector("#access_key")`, 20*time.Second)
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#access_key"), webAccessKey),
		chromedp.SendKeys(chromedp.CSS("#secret_key"), webSecretKey),
		chromedp.Click(chromedp.CSS("#signin")),
	); err != nil {
		t.Fatal(err)
	}
	webPoll(t, ctx, "two live updates", `location.pathname === "/" && Number(document.body.dataset.updates) >= 2`, 30*time.Second)
	webPoll(t, ctx, "Sign out, for the login session", `!document.getElementById("logout").hidden`, 10*time.Second)
	webPoll(t, ctx, "six alive peers", `document.querySelectorAll('#nodes tr[data-node^="peer"][data-state="alive"]').length === 6`, 30*time.Second)
	checkEmbeddedFigures(t, ctx, web, dir)
	webPoll(t, ctx, "the bucket count", `(() => { const r = document.querySelector('#bucket-list tr[data-bucket="webtest"]');
		return !!r && r.children[1].textContent === "3"; })()`, 60*time.Second)

	type drawn struct {
		Gateways, RingRows, RingP, SchedRows, Chosen int
		Policy, P50, Epoch                           string
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[drawn](`(() => {
		const q = (s) => document.querySelectorAll(s);
		const k = (id, key) => document.querySelector(id + ' [data-k="' + key + '"]').lastChild.textContent;
		return {
			Gateways: q('#nodes tr[data-node^="gateway"][data-state="alive"]').length,
			RingRows: q('#ring-peers tr[data-peer]').length,
			RingP: [...q('#ring-peers tr[data-peer] td:last-child')].filter(td => /\d\.\d\d$/.test(td.textContent.trim())).length,
			SchedRows: q('#sched-peers tr[data-peer]').length,
			Chosen: [...q('#sched-peers tr[data-peer]')].reduce((a, tr) => a + Number(tr.children[1].textContent.replace(/,/g, '')), 0),
			Policy: k('#sched-summary', 'policy'),
			P50: k('#sched-summary', 'p50'),
			Epoch: k('#ring-summary', 'epoch'),
		};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if got.Gateways != 1 || got.RingRows != 6 || got.RingP != 6 {
		t.Errorf("nodes/ring: %d gateways, %d ring rows, %d with P; want 1, 6, 6", got.Gateways, got.RingRows, got.RingP)
	}
	if got.Policy != "eta" || got.SchedRows < 4 || got.Chosen < objects*4 {
		t.Errorf("scheduler: policy %q, %d peer rows, %d chosen; want eta, >= 4, >= %d", got.Policy, got.SchedRows, got.Chosen, objects*4)
	}
	if got.P50 == "—" || !strings.HasSuffix(got.P50, "s") {
		t.Errorf("GET p50 %q: want a latency after %d GETs", got.P50, objects)
	}
	webPoll(t, ctx, "the latency chart", `document.querySelectorAll('#latency-chart polyline').length >= 3 &&
		Number(document.body.dataset.updates) >= 5`, 60*time.Second)
	stopTraffic()
	webScreenshot(t, ctx, "status.png", os.Getenv("TESSERA_WEB_DOCS") != "")
	webBasicAuthURL(t, web)

	// Neither secret appears in any response or log line (the server's
	// stdout banner prints the S3 keys on purpose and is not a log).
	_, status := webGet(t, "http://"+web+"/api/status?history=1", true)
	_, metrics := webGet(t, "http://"+web+"/metrics", false)
	_, page := webGet(t, "http://"+web+"/", true)
	html, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	logs := p.stderr.String()
	p.mu.Unlock()
	for what, text := range map[string]string{"status": status, "metrics": metrics, "page": page, "drawn page": html, "log": logs} {
		for _, secret := range []string{webSecretKey, webClusterSecret} {
			if strings.Contains(text, secret) {
				t.Errorf("%s contains a secret", what)
			}
		}
	}
	if !strings.Contains(logs, `"message":"request"`) {
		t.Error("debug log has no access log lines: the secret check looked at too little")
	}
}

// webDismissAuthPrompts answers every Basic challenge the way a person
// dismissing the browser's prompt does, so the browser shows the 401's
// body: headless Chromium has no prompt and would fail the navigation.
func webDismissAuthPrompts(t *testing.T, ctx context.Context) {
	t.Helper()
	err := chromedp.Listen(ctx, func(ev any) {
		// Commands cannot run inside the listener: answer from goroutines.
		switch e := ev.(type) {
		case *fetch.EventRequestPaused:
			go func() {
				_, _ = chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID})
			}()
		case *fetch.EventAuthRequired:
			cancel := &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseCancelAuth}
			go func() {
				_, _ = chromedp.Call(ctx, fetch.ContinueWithAuth, fetch.ContinueWithAuthParams{RequestID: e.RequestID, AuthChallengeResponse: cancel})
			}()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	on := true
	if _, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{HandleAuthRequests: &on}); err != nil {
		t.Fatal(err)
	}
}

// webBasicAuthURL opens http://KEY:SECRET@host/ in a browser of its own:
// the page's 401 challenges for Basic, so the browser sends the URL's
// keys. Basic auth has no session to end, so there is no Sign out.
func webBasicAuthURL(t *testing.T, web string) {
	t.Helper()
	ctx := webBrowser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate("http://"+webAccessKey+":"+webSecretKey+"@"+web+"/")); err != nil {
		t.Fatal(err)
	}
	webPoll(t, ctx, "the page through basic auth", `location.pathname === "/" && Number(document.body.dataset.updates) >= 2`, 30*time.Second)
	hidden, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("logout").hidden`))
	if err != nil {
		t.Fatal(err)
	}
	if !hidden {
		t.Error("Sign out shown to a browser let in by basic auth")
	}
}

// checkEmbeddedFigures checks what /api/status and the page say of an
// embedded server's version, disk and CPU: the version is the binary's,
// the six peers of one DIR share its disk, which counts once, and the
// process's CPU is on the gateway's row alone.
func checkEmbeddedFigures(t *testing.T, ctx context.Context, web, dir string) {
	t.Helper()
	out, err := exec.Command(tesseraBinary(t), "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimSpace(strings.TrimPrefix(string(out), "tessera "))
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err != nil {
		t.Fatal(err)
	}
	disk := fs.Blocks * uint64(fs.Bsize)
	st := webStatusWithGatewayCPU(t, web)
	if st.Version != version {
		t.Errorf("/api/status version %q, want the binary's %q", st.Version, version)
	}
	var capacity uint64
	for _, n := range st.Nodes {
		if n.Role == "peer" {
			capacity += n.Capacity
			if n.CPU != nil {
				t.Errorf("peer %s reports CPU %v, the process's again", n.ID, *n.CPU)
			}
		}
	}
	if capacity > disk || capacity+6 < disk {
		t.Errorf("the peers' capacity adds up to %d bytes, want the disk's %d once", capacity, disk)
	}
	type drawn struct {
		Node    string
		PeerCPU []string
	}
	webPoll(t, ctx, "the gateway's CPU", `[...document.querySelectorAll('#nodes tr[data-node^="gateway"] td')][7].textContent.includes("%")`, 10*time.Second)
	got, err := chromedp.Run(ctx, chromedp.Evaluate[drawn](`(() => ({
		Node: document.getElementById("node").textContent,
		PeerCPU: [...document.querySelectorAll('#nodes tr[data-node^="peer"]')].map(tr => tr.children[7].textContent),
	}))()`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(got.Node, " · "+version) {
		t.Errorf("the page's header %q does not show version %s", got.Node, version)
	}
	for _, c := range got.PeerCPU {
		if c != "—" {
			t.Errorf("a peer's CPU cell shows %q, want —: its CPU is the gateway row's", c)
		}
	}
}

// webNode is what checkEmbeddedFigures reads of a node in /api/status.
type webNode struct {
	ID       string   `json:"id"`
	Role     string   `json:"role"`
	Capacity uint64   `json:"capacity_bytes"`
	CPU      *float64 `json:"cpu"`
}

// webStatusWithGatewayCPU polls /api/status until the gateway has
// reported its CPU (its stats come every second).
func webStatusWithGatewayCPU(t *testing.T, web string) (st struct {
	Version string    `json:"version"`
	Nodes   []webNode `json:"nodes"`
}) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		_, body := webGet(t, "http://"+web+"/api/status", true)
		if err := json.Unmarshal([]byte(body), &st); err != nil {
			t.Fatalf("/api/status: %v", err)
		}
		for _, n := range st.Nodes {
			if n.Role == "gateway" && n.CPU != nil {
				return st
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the gateway never reported its CPU: %s", body)
		}
	}
}

// TestWebPeerDeath runs a gateway and six peers as separate processes,
// kills one peer with SIGKILL and watches the page mark it dead.
func TestWebPeerDeath(t *testing.T) {
	webUnsetCABundle(t)
	ctx := webBrowser(t)
	gossip := freeAddr(t)
	gw := startWebProc(t, "gateway", "--address", "127.0.0.1:0", "--web-address", "127.0.0.1:0",
		"--bind", gossip, "--web-public", "--log-level", "info")
	web := gw.logField(t, "gateway started", "web")
	var peers []*webProc
	var apis []string
	for i := 0; i < 6; i++ {
		args := []string{"peer", t.TempDir(), "--address", "127.0.0.1:0", "--bind", "127.0.0.1:0", "--join", gossip,
			"--log-level", "info"}
		if i == 0 { // one peer also serves its probes and metrics
			args = append(args, "--web-address", "127.0.0.1:0", "--metrics-token", "peer-token")
		}
		peers = append(peers, startWebProc(t, args...))
	}
	for _, p := range peers {
		apis = append(apis, p.logField(t, "peer started", "api"))
	}
	checkPeerWeb(t, peers[0].logField(t, "peer web started", "web"))
	if err := chromedp.Do(ctx, chromedp.Navigate("http://"+web+"/")); err != nil {
		t.Fatal(err)
	}
	webPoll(t, ctx, "six alive peers", `document.querySelectorAll('#nodes tr[data-node][data-state="alive"]').length === 7`, 60*time.Second)
	if hidden, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("logout").hidden`)); err != nil || !hidden {
		t.Errorf("Sign out shown on a --web-public page (%v)", err)
	}

	// Find the victim's ID by its shard API address.
	const victim = 2
	id, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`(async () => {
		const st = await (await fetch("/api/status")).json();
		const n = st.nodes.find(n => n.address === %q);
		return n ? n.id : "";
	})()`, apis[victim]), chromedp.EvalAwaitPromise))
	if err != nil || id == "" {
		t.Fatalf("no node with address %s in /api/status: %v", apis[victim], err)
	}
	peers[victim].kill()
	webPoll(t, ctx, "the killed peer marked dead",
		fmt.Sprintf(`document.querySelector('#nodes tr[data-node=%q]')?.dataset.state === "dead"`, id), 90*time.Second)
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#nodes tr[data-node^="peer"][data-state="alive"]').length`))
	if err != nil {
		t.Fatal(err)
	}
	if n != 5 {
		t.Errorf("%d peers alive on the page after killing one of six, want 5", n)
	}
	webScreenshot(t, ctx, "status-peer-dead.png", false)
}

// checkPeerWeb checks a peer's probes and its token-guarded metrics.
func checkPeerWeb(t *testing.T, addr string) {
	t.Helper()
	for _, path := range []string{"/health/live", "/health/ready"} {
		if code, body := webGet(t, "http://"+addr+path, false); code != http.StatusOK {
			t.Errorf("peer %s: %d %s", path, code, body)
		}
	}
	if code, _ := webGet(t, "http://"+addr+"/metrics", false); code != http.StatusUnauthorized {
		t.Errorf("peer /metrics without its token: %d, want 401", code)
	}
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer peer-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("peer /metrics does not parse: %v", err)
	}
	for _, name := range []string{"tessera_peer_sent_bytes_total", "tessera_peer_capacity_bytes", "tessera_cluster_members", "go_goroutines"} {
		if _, ok := fams[name]; !ok {
			t.Errorf("peer /metrics lacks %s", name)
		}
	}
}

func webUnsetCABundle(t *testing.T) {
	if v, ok := os.LookupEnv("AWS_CA_BUNDLE"); ok {
		os.Unsetenv("AWS_CA_BUNDLE")
		t.Cleanup(func() { os.Setenv("AWS_CA_BUNDLE", v) })
	}
}
