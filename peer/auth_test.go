package peer

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"tessera/meta"
)

// TestAuthRejections sends a MakeBucket request altered in one way per case
// and checks the server answers 401 and creates nothing.
func TestAuthRejections(t *testing.T) {
	p := newPeer(t, nil)
	key := deriveKey(secret)
	body, _ := meta.Marshal(&meta.Bucket{Name: "victim"}, nil)
	target := pathBucket + "?bucket=victim"
	now := time.Now()
	cases := []struct {
		name string
		req  func() *http.Request
	}{
		{"no headers", func() *http.Request { return rawRequest(t, p.srv.URL, "PUT", target, body, nil, now) }},
		{"wrong secret", func() *http.Request {
			return rawRequest(t, p.srv.URL, "PUT", target, body, deriveKey([]byte("other")), now)
		}},
		{"expired timestamp", func() *http.Request {
			return rawRequest(t, p.srv.URL, "PUT", target, body, key, now.Add(-MaxSkew-2*time.Second))
		}},
		{"future timestamp", func() *http.Request {
			return rawRequest(t, p.srv.URL, "PUT", target, body, key, now.Add(MaxSkew+2*time.Second))
		}},
		{"query changed after signing", func() *http.Request {
			r := rawRequest(t, p.srv.URL, "PUT", pathBucket+"?bucket=other", body, key, now)
			r.URL.RawQuery = "bucket=victim"
			return r
		}},
		{"method changed after signing", func() *http.Request {
			r := rawRequest(t, p.srv.URL, "POST", target, body, key, now)
			r.Method = "PUT"
			return r
		}},
		{"uppercase MAC", func() *http.Request {
			r := rawRequest(t, p.srv.URL, "PUT", target, body, key, now)
			r.Header.Set(HeaderMAC, strings.ToUpper(r.Header.Get(HeaderMAC)))
			return r
		}},
		{"duplicate nonce header", func() *http.Request {
			r := rawRequest(t, p.srv.URL, "PUT", target, body, key, now)
			r.Header.Add(HeaderNonce, r.Header.Get(HeaderNonce))
			return r
		}},
		{"missing MAC", func() *http.Request {
			r := rawRequest(t, p.srv.URL, "PUT", target, body, key, now)
			r.Header.Del(HeaderMAC)
			return r
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			expect401(t, tc.req())
			if _, err := p.store.StatBucket(ctx, "victim"); !errors.Is(err, meta.ErrBucketNotFound) {
				t.Fatalf("rejected request changed the store: %v", err)
			}
		})
	}

	t.Run("replayed nonce", func(t *testing.T) {
		first := rawRequest(t, p.srv.URL, "PUT", target, body, key, now)
		replay := first.Clone(ctx)
		replay.Body = http.NoBody
		resp, err := http.DefaultClient.Do(first)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("first request: %d", resp.StatusCode)
		}
		if err := p.store.DeleteBucket(ctx, "victim"); err != nil {
			t.Fatal(err)
		}
		r, _ := http.NewRequest("PUT", p.srv.URL+target, strings.NewReader(string(body)))
		r.Header = replay.Header
		expect401(t, r)
		if _, err := p.store.StatBucket(ctx, "victim"); !errors.Is(err, meta.ErrBucketNotFound) {
			t.Fatalf("replay changed the store: %v", err)
		}
	})
	http.DefaultClient.CloseIdleConnections()

	t.Run("client with wrong secret", func(t *testing.T) {
		c := NewClient(ClientConfig{ID: "p1", BaseURL: p.srv.URL, Secret: []byte("nope")})
		defer c.CloseIdleConnections()
		err := c.MakeBucket(ctx, meta.Bucket{Name: "victim"})
		if !errors.Is(err, ErrUnauthorized) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("client without secret", func(t *testing.T) {
		c := NewClient(ClientConfig{ID: "p1", BaseURL: p.srv.URL})
		if _, err := c.ListBuckets(ctx); !errors.Is(err, ErrUnauthorized) {
			t.Fatalf("got %v", err)
		}
	})
}

func expect401(t *testing.T, req *http.Request) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var we wireError
	json.NewDecoder(resp.Body).Decode(&we)
	if resp.StatusCode != http.StatusUnauthorized || we.Code != "Unauthorized" {
		t.Fatalf("status %d code %q, want 401 Unauthorized", resp.StatusCode, we.Code)
	}
}

func TestServerWithoutSecretRejectsAll(t *testing.T) {
	h := NewServer(ServerConfig{})
	// Signed with the key an empty secret would naively give: HMAC keyed
	// with nothing. A server without a secret must not accept it.
	req := rawRequest(t, "http://peer", "GET", pathBuckets, nil, []byte{}, time.Now())
	rec := newRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusUnauthorized {
		t.Fatalf("status %d", rec.Code)
	}
}

func TestServerClock(t *testing.T) {
	skewed := func() time.Time { return time.Now().Add(10 * time.Minute) }
	p := newPeer(t, skewed)
	if _, err := p.client.ListBuckets(ctx); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("request against a skewed server clock: %v", err)
	}
}

func TestNonceCache(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	span := 2 * time.Minute
	type op struct {
		nonce string
		at    time.Duration
		want  error
	}
	cases := []struct {
		name string
		max  int
		ops  []op
	}{
		{"fresh nonces pass", 10, []op{{"a", 0, nil}, {"b", 0, nil}}},
		{"replay within window", 10, []op{{"a", 0, nil}, {"a", time.Second, ErrUnauthorized}}},
		{"replay just before span", 10, []op{{"a", 0, nil}, {"a", span - time.Millisecond, ErrUnauthorized}}},
		{"replay after a rotation", 10, []op{{"a", 0, nil}, {"b", span, nil}, {"a", span + time.Second, ErrUnauthorized}}},
		{"inserted right before rotation survives a span", 10,
			[]op{{"x", 0, nil}, {"a", span - time.Millisecond, nil}, {"b", span, nil}, {"a", 2*span - time.Second, ErrUnauthorized}}},
		{"forgotten after two spans", 10, []op{{"a", 0, nil}, {"a", 2 * span, nil}}},
		{"full cache refuses", 2, []op{{"a", 0, nil}, {"b", 0, nil}, {"c", 0, ErrBusy}}},
		{"full cache drains", 2, []op{{"a", 0, nil}, {"b", 0, nil}, {"c", 2 * span, nil}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newNonceCache(span, tc.max)
			for i, o := range tc.ops {
				err := c.add(o.nonce, t0.Add(o.at))
				if o.want == nil && err != nil || o.want != nil && !errors.Is(err, o.want) {
					t.Fatalf("op %d (%s at %v): %v, want %v", i, o.nonce, o.at, err, o.want)
				}
			}
		})
	}
}

func TestParseAuth(t *testing.T) {
	good := http.Header{}
	good.Set(HeaderTime, "1700000000")
	good.Set(HeaderNonce, strings.Repeat("ab", 16))
	good.Set(HeaderMAC, strings.Repeat("0f", 32))
	if a, err := parseAuth(good); err != nil || a.ts != 1700000000 || len(a.mac) != 32 {
		t.Fatalf("good headers: %v %+v", err, a)
	}
	mutate := map[string]func(h http.Header){
		"negative time":  func(h http.Header) { h.Set(HeaderTime, "-5") },
		"huge time":      func(h http.Header) { h.Set(HeaderTime, "9999999999999999999") },
		"time with junk": func(h http.Header) { h.Set(HeaderTime, "17e8") },
		"empty time":     func(h http.Header) { h.Set(HeaderTime, "") },
		"short nonce":    func(h http.Header) { h.Set(HeaderNonce, "abcd") },
		"nonce not hex":  func(h http.Header) { h.Set(HeaderNonce, strings.Repeat("zz", 16)) },
		"short MAC":      func(h http.Header) { h.Set(HeaderMAC, "00") },
		"two times":      func(h http.Header) { h.Add(HeaderTime, "1") },
		"no nonce":       func(h http.Header) { h.Del(HeaderNonce) },
	}
	for name, m := range mutate {
		h := good.Clone()
		m(h)
		if _, err := parseAuth(h); !errors.Is(err, ErrUnauthorized) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// FuzzParseAuth feeds arbitrary header values to the parser; whatever it
// accepts must have the exact shapes verification relies on.
func FuzzParseAuth(f *testing.F) {
	f.Add("1700000000", strings.Repeat("ab", 16), strings.Repeat("0f", 32))
	f.Add("", "", "")
	f.Add("-1", "x", "y")
	f.Add("00000000000000000001", strings.Repeat("AB", 16), strings.Repeat("0F", 32))
	f.Fuzz(func(t *testing.T, ts, nonce, mac string) {
		h := http.Header{}
		h.Set(HeaderTime, ts)
		h.Set(HeaderNonce, nonce)
		h.Set(HeaderMAC, mac)
		a, err := parseAuth(h)
		if err != nil {
			if !errors.Is(err, ErrUnauthorized) {
				t.Fatalf("error %v does not wrap ErrUnauthorized", err)
			}
			return
		}
		if a.ts < 0 || a.tsRaw != ts || len(a.nonce) != nonceHexLen || len(a.mac) != macHexLen/2 {
			t.Fatalf("accepted malformed headers: %+v", a)
		}
		// A MAC not made with the key never verifies.
		v := &verifier{key: deriveKey(secret), now: func() time.Time { return time.Unix(a.ts, 0) },
			nonces: newNonceCache(time.Minute, 10)}
		req, _ := http.NewRequest("GET", "http://peer/v1/buckets", nil)
		req.Header = h
		want := computeMAC(v.key, "GET", "/v1/buckets", "", a.tsRaw, a.nonce)
		if err := v.verify(req); err == nil && string(want) != string(a.mac) {
			t.Fatal("forged MAC verified")
		}
	})
}
