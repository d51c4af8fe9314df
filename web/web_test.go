package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	testAK = "AKIDTESTWEB"
	testSK = "s3cr3t-web-key-that-must-never-leak"
)

// fakeSource serves a fixed status and readiness.
type fakeSource struct {
	st    Status
	ready error
}

func (f *fakeSource) Status() Status { return f.st }
func (f *fakeSource) Ready() error   { return f.ready }

type testServer struct {
	*httptest.Server
	web  *Server
	logs *bytes.Buffer
}

func newTestServer(t *testing.T, mutate func(*Config)) *testServer {
	t.Helper()
	logs := &bytes.Buffer{}
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "test_counter_total", Help: "test"})
	reg.MustRegister(c)
	c.Add(3)
	errs := NewErrorLog(8)
	cfg := Config{
		Source:      &fakeSource{st: Synthetic(5, 1)},
		Logger:      zerolog.New(logs).Hook(errs),
		Credentials: Credentials{AccessKey: testAK, SecretKey: testSK},
		Metrics:     reg,
		Errors:      errs,
		SampleEvery: 20 * time.Millisecond,
		HistoryLen:  10,
	}
	if mutate != nil {
		mutate(&cfg)
	}
	ws, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(ws)
	t.Cleanup(func() {
		ts.Close()
		if err := ws.Close(); err != nil {
			t.Error(err)
		}
	})
	return &testServer{Server: ts, web: ws, logs: logs}
}

// noRedirect returns a client that reports redirects instead of following
// them.
func noRedirect() *http.Client {
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

type request struct {
	method, path string
	basic        *[2]string
	cookie       *http.Cookie
	bearer       string
	form         url.Values
}

func (ts *testServer) do(t *testing.T, rq request) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if rq.form != nil {
		body = strings.NewReader(rq.form.Encode())
	}
	req, err := http.NewRequest(rq.method, ts.URL+rq.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if rq.form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if rq.basic != nil {
		req.SetBasicAuth(rq.basic[0], rq.basic[1])
	}
	if rq.cookie != nil {
		req.AddCookie(rq.cookie)
	}
	if rq.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+rq.bearer)
	}
	resp, err := noRedirect().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func TestAccess(t *testing.T) {
	good := &[2]string{testAK, testSK}
	bad := &[2]string{testAK, "wrong"}
	cases := []struct {
		name   string
		public bool
		token  string
		rq     request
		want   int
		where  string // Location on redirects
		form   bool   // the body is the login form
	}{
		{name: "live open", rq: request{method: "GET", path: "/health/live"}, want: 200},
		{name: "ready open", rq: request{method: "GET", path: "/health/ready"}, want: 200},
		{name: "page needs login", rq: request{method: "GET", path: "/"}, want: 401, form: true},
		{name: "page wrong secret", rq: request{method: "GET", path: "/", basic: bad}, want: 401, form: true},
		{name: "static needs login", rq: request{method: "GET", path: "/static/app.js"}, want: 401, form: true},
		{name: "login form open", rq: request{method: "GET", path: "/login"}, want: 200, form: true},
		{name: "public login goes to the page", public: true, rq: request{method: "GET", path: "/login"}, want: 303, where: "/"},
		{name: "login assets open", rq: request{method: "GET", path: "/static/style.css"}, want: 200},
		{name: "api needs auth", rq: request{method: "GET", path: "/api/status"}, want: 401},
		{name: "api wrong secret", rq: request{method: "GET", path: "/api/status", basic: bad}, want: 401},
		{name: "api basic auth", rq: request{method: "GET", path: "/api/status", basic: good}, want: 200},
		{name: "page basic auth", rq: request{method: "GET", path: "/", basic: good}, want: 200},
		{name: "public page", public: true, rq: request{method: "GET", path: "/"}, want: 200},
		{name: "public api", public: true, rq: request{method: "GET", path: "/api/status"}, want: 200},
		{name: "metrics open", rq: request{method: "GET", path: "/metrics"}, want: 200},
		{name: "metrics token missing", token: "tok", rq: request{method: "GET", path: "/metrics"}, want: 401},
		{name: "metrics token wrong", token: "tok", rq: request{method: "GET", path: "/metrics", bearer: "nope"}, want: 401},
		{name: "metrics token", token: "tok", rq: request{method: "GET", path: "/metrics", bearer: "tok"}, want: 200},
		{name: "metrics ignore s3 creds", token: "tok", rq: request{method: "GET", path: "/metrics", basic: good}, want: 401},
		{name: "unknown path", rq: request{method: "GET", path: "/nope", basic: good}, want: 404},
		{name: "profiles need auth", rq: request{method: "GET", path: "/debug/pprof/"}, want: 401},
		{name: "profiles need auth on a public page", public: true, rq: request{method: "GET", path: "/debug/pprof/goroutine"}, want: 401},
		{name: "profiles wrong secret", public: true, rq: request{method: "GET", path: "/debug/pprof/heap", basic: bad}, want: 401},
		{name: "profiles index", rq: request{method: "GET", path: "/debug/pprof/", basic: good}, want: 200},
		{name: "heap profile", public: true, rq: request{method: "GET", path: "/debug/pprof/heap", basic: good}, want: 200},
		{name: "cpu profile", rq: request{method: "GET", path: "/debug/pprof/profile?seconds=1", basic: good}, want: 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts := newTestServer(t, func(c *Config) { c.Public, c.MetricsToken = tc.public, tc.token })
			resp, body := ts.do(t, tc.rq)
			if resp.StatusCode != tc.want {
				t.Fatalf("%s %s: status %d, want %d", tc.rq.method, tc.rq.path, resp.StatusCode, tc.want)
			}
			if tc.where != "" && resp.Header.Get("Location") != tc.where {
				t.Errorf("Location %q, want %q", resp.Header.Get("Location"), tc.where)
			}
			// Every 401 but /metrics' challenges for Basic, so a browser
			// sends the keys of a http://KEY:SECRET@host/ URL.
			want := "Basic "
			if tc.rq.path == "/metrics" {
				want = "Bearer "
			}
			if got := resp.Header.Get("WWW-Authenticate"); resp.StatusCode == 401 && !strings.HasPrefix(got, want) {
				t.Errorf("401 with WWW-Authenticate %q, want %s...", got, want)
			}
			if hasForm := strings.Contains(body, `id="access_key"`); hasForm != tc.form {
				t.Errorf("body has the login form: %v, want %v", hasForm, tc.form)
			}
		})
	}
}

func TestLoginSession(t *testing.T) {
	ts := newTestServer(t, nil)
	resp, _ := ts.do(t, request{method: "POST", path: "/login", form: url.Values{"access_key": {testAK}, "secret_key": {"wrong"}}})
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/login?failed=1" || len(resp.Cookies()) != 0 {
		t.Fatalf("bad login: status %d, location %q, cookies %v", resp.StatusCode, resp.Header.Get("Location"), resp.Cookies())
	}
	resp, _ = ts.do(t, request{method: "POST", path: "/login", form: url.Values{"access_key": {testAK}, "secret_key": {testSK}}})
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/" {
		t.Fatalf("good login: status %d, location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	var c *http.Cookie
	for _, x := range resp.Cookies() {
		if x.Name == sessionCookie {
			c = x
		}
	}
	if c == nil {
		t.Fatal("no session cookie")
	}
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.MaxAge <= 0 || c.Expires.IsZero() {
		t.Errorf("cookie attributes: HttpOnly=%v SameSite=%v MaxAge=%d Expires=%v", c.HttpOnly, c.SameSite, c.MaxAge, c.Expires)
	}
	if strings.Contains(c.Value, testSK) || strings.Contains(c.Value, testAK) {
		t.Errorf("cookie carries a key: %q", c.Value)
	}
	for _, path := range []string{"/", "/api/status", "/static/app.js"} {
		if resp, _ := ts.do(t, request{method: "GET", path: path, cookie: c}); resp.StatusCode != 200 {
			t.Errorf("GET %s with session: %d", path, resp.StatusCode)
		}
	}
	// Flip one character of the MAC: the cookie must stop working.
	forged := *c
	b := []byte(forged.Value)
	b[len(b)-2] ^= 1
	forged.Value = string(b)
	if resp, _ := ts.do(t, request{method: "GET", path: "/api/status", cookie: &forged}); resp.StatusCode != 401 {
		t.Errorf("forged cookie: %d, want 401", resp.StatusCode)
	}
	resp, _ = ts.do(t, request{method: "POST", path: "/logout", cookie: c})
	if resp.StatusCode != 303 || len(resp.Cookies()) != 1 || resp.Cookies()[0].MaxAge >= 0 {
		t.Errorf("logout: status %d cookies %v", resp.StatusCode, resp.Cookies())
	}
}

func TestSessionExpiry(t *testing.T) {
	s := newSessions(Credentials{AccessKey: testAK, SecretKey: testSK}, time.Hour)
	now := time.Unix(1_800_000_000, 0)
	s.now = func() time.Time { return now }
	v, _ := s.issue()
	if err := s.check(v); err != nil {
		t.Fatalf("fresh cookie: %v", err)
	}
	now = now.Add(59 * time.Minute)
	if err := s.check(v); err != nil {
		t.Fatalf("cookie before expiry: %v", err)
	}
	now = now.Add(2 * time.Minute)
	if err := s.check(v); !errors.Is(err, errBadSession) {
		t.Fatalf("expired cookie: %v, want errBadSession", err)
	}
	other := newSessions(Credentials{AccessKey: testAK, SecretKey: "another"}, time.Hour)
	other.now = s.now
	v2, _ := other.issue()
	if err := s.check(v2); !errors.Is(err, errBadSession) {
		t.Fatalf("cookie from other credentials: %v, want errBadSession", err)
	}
}

func FuzzSessionCheck(f *testing.F) {
	s := newSessions(Credentials{AccessKey: testAK, SecretKey: testSK}, time.Hour)
	good, _ := s.issue()
	for _, seed := range []string{"", "x", good, good + "A", strings.Repeat("A", 54), "%%%", good[:10]} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if err := s.check(v); err == nil && v != good {
			// Another encoding of the same bytes would need a MAC forgery.
			t.Fatalf("accepted %q, which was never issued", v)
		}
	})
}

// TestNoSecretInResponses fetches every endpoint, including failed logins
// carrying the secret as the access key, and looks for the secrets in
// bodies, headers and the log.
func TestNoSecretInResponses(t *testing.T) {
	const cluster = "cluster-secret-never-shown"
	ts := newTestServer(t, func(c *Config) {
		st := Synthetic(3, 2)
		st.Errors = []LogLine{{Message: "upstream said no"}}
		c.Source = &fakeSource{st: st, ready: errors.New("not ready: 1 peer alive")}
		c.Logger = c.Logger.Level(zerolog.DebugLevel)
	})
	ts.web.cfg.Logger.Warn().Msg("a warning for the error list")
	good := &[2]string{testAK, testSK}
	rqs := []request{
		{method: "GET", path: "/health/live"}, {method: "GET", path: "/health/ready"},
		{method: "GET", path: "/"}, {method: "GET", path: "/", basic: good},
		{method: "GET", path: "/login"}, {method: "GET", path: "/login?failed=1"},
		{method: "GET", path: "/api/status?history=1", basic: good}, {method: "GET", path: "/metrics"},
		{method: "GET", path: "/static/app.js", basic: good}, {method: "GET", path: "/static/index.html", basic: good},
		{method: "POST", path: "/login", form: url.Values{"access_key": {testSK}, "secret_key": {cluster}}},
		{method: "POST", path: "/login", form: url.Values{"access_key": {testAK}, "secret_key": {testSK}}},
		{method: "GET", path: "/api/status", basic: &[2]string{testSK, cluster}},
	}
	for _, rq := range rqs {
		resp, body := ts.do(t, rq)
		var hdr strings.Builder
		_ = resp.Header.Write(&hdr)
		for _, secret := range []string{testSK, cluster} {
			if strings.Contains(body, secret) || strings.Contains(hdr.String(), secret) {
				t.Errorf("%s %s: response contains a secret", rq.method, rq.path)
			}
		}
	}
	if log := ts.logs.String(); strings.Contains(log, testSK) || strings.Contains(log, cluster) {
		t.Errorf("log contains a secret:\n%s", log)
	}
}

func TestStatusJSON(t *testing.T) {
	ts := newTestServer(t, nil)
	ts.web.cfg.Logger.Error().Msg("disk on fire")
	ts.web.cfg.Logger.Info().Msg("just info")
	// Let the sampler add a few samples on top of the first.
	time.Sleep(100 * time.Millisecond)
	_, body := ts.do(t, request{method: "GET", path: "/api/status?history=1", basic: &[2]string{testAK, testSK}})
	var st Status
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("decode: %v\n%s", err, body)
	}
	if len(st.Nodes) != 6 { // 5 peers and the gateway
		t.Errorf("nodes: %d, want 6", len(st.Nodes))
	}
	if len(st.Errors) != 1 || st.Errors[0].Message != "disk on fire" || st.Errors[0].Level != "error" {
		t.Errorf("errors: %+v, want the one error line", st.Errors)
	}
	h := st.History
	if h == nil || len(h.Times) < 2 || len(h.Times) > 10 {
		t.Fatalf("history: %+v, want 2..10 samples", h)
	}
	for id, nh := range h.Nodes {
		if len(nh.Send) != len(h.Times) || len(nh.Recv) != len(h.Times) {
			t.Errorf("node %s history misaligned: %d/%d samples for %d times", id, len(nh.Send), len(nh.Recv), len(h.Times))
		}
	}
	_, body = ts.do(t, request{method: "GET", path: "/api/status", basic: &[2]string{testAK, testSK}})
	if strings.Contains(body, `"history"`) {
		t.Error("history sent without ?history=1")
	}
}

// Figures no part reports are null on the wire, so the page can tell them
// from a measured zero.
func TestUnreportedIsNull(t *testing.T) {
	ts := newTestServer(t, func(c *Config) {
		c.Source = &fakeSource{st: Status{Nodes: []Node{{ID: "p1", Role: "peer", State: "alive"}}}}
	})
	_, body := ts.do(t, request{method: "GET", path: "/api/status", basic: &[2]string{testAK, testSK}})
	for _, want := range []string{`"epoch":null`, `"cpu":null`, `"throughput_send":null`, `"pool_size":null`, `"pending":null`, `"get_p50":null`} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %s: %s", want, body)
		}
	}
}

func TestReadyFailing(t *testing.T) {
	ts := newTestServer(t, func(c *Config) { c.Source = &fakeSource{ready: errors.New("not ready: 2 peers alive")} })
	resp, body := ts.do(t, request{method: "GET", path: "/health/ready"})
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "2 peers alive") {
		t.Fatalf("ready: %d %q", resp.StatusCode, body)
	}
}

func TestNewNeedsCredentials(t *testing.T) {
	if _, err := New(Config{Source: &fakeSource{}}); err == nil {
		t.Fatal("New without credentials and not public: want an error")
	}
}

func TestProbes(t *testing.T) {
	var notReady error
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "probe_test", Help: "test"}))
	ts := httptest.NewServer(Probes(func() error { return notReady }, reg, "tok"))
	defer ts.Close()
	code := func(path, bearer string) int {
		req, _ := http.NewRequest("GET", ts.URL+path, nil)
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	cases := []struct {
		path, bearer string
		notReady     error
		want         int
	}{
		{"/health/live", "", nil, 200},
		{"/health/ready", "", nil, 200},
		{"/health/ready", "", errors.New("store closed"), 503},
		{"/metrics", "", nil, 401},
		{"/metrics", "tok", nil, 200},
		{"/", "", nil, 404},
		{"/api/status", "", nil, 404},
	}
	for _, tc := range cases {
		notReady = tc.notReady
		if got := code(tc.path, tc.bearer); got != tc.want {
			t.Errorf("GET %s (bearer %q, ready err %v): %d, want %d", tc.path, tc.bearer, tc.notReady, got, tc.want)
		}
	}
}

// TestSignOutOnlyForSessions: /api/status says whether the request came
// with a login session, the only access Sign out can end.
func TestSignOutOnlyForSessions(t *testing.T) {
	good := &[2]string{testAK, testSK}
	login := func(t *testing.T, ts *testServer) *http.Cookie {
		resp, _ := ts.do(t, request{method: "POST", path: "/login", form: url.Values{"access_key": {testAK}, "secret_key": {testSK}}})
		for _, c := range resp.Cookies() {
			if c.Name == sessionCookie {
				return c
			}
		}
		t.Fatal("no session cookie")
		return nil
	}
	cases := []struct {
		name    string
		public  bool
		basic   *[2]string
		cookie  bool
		session bool
	}{
		{name: "session", cookie: true, session: true},
		{name: "basic auth", basic: good},
		{name: "public page", public: true},
		{name: "public page with an old cookie", public: true, cookie: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts := newTestServer(t, func(c *Config) { c.Public = tc.public })
			rq := request{method: "GET", path: "/api/status", basic: tc.basic}
			if tc.cookie {
				rq.cookie = login(t, ts)
			}
			resp, body := ts.do(t, rq)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			var st Status
			if err := json.Unmarshal([]byte(body), &st); err != nil {
				t.Fatal(err)
			}
			if st.Session != tc.session {
				t.Errorf("session %v, want %v", st.Session, tc.session)
			}
		})
	}
}
