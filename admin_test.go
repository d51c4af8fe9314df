package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tessera/gateway"
	"tessera/gateway/sigv4"
)

// Command lines the admin subcommands cannot run exit 2 before any call,
// saying what was wrong.
func TestAdminBadArguments(t *testing.T) {
	t.Setenv("TESSERA_ACCESS_KEY", "AK")
	t.Setenv("TESSERA_SECRET_KEY", "SK")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"admin", "decommission"}, "want one PEER"},
		{[]string{"admin", "decommission", "a", "b"}, "want one PEER"},
		{[]string{"admin", "decommission", "p1", "--wait", "soon"}, "invalid value"},
		{[]string{"admin", "scrub", "--wait", "soon"}, "invalid value"},
		{[]string{"admin", "scrub", "--bogus"}, "flag provided but not defined"},
		{[]string{"admin", "status", "extra"}, `unexpected argument "extra"`},
		{[]string{"admin", "info"}, "want one BUCKET"},
		{[]string{"admin", "info", "a", "b"}, "want one BUCKET"},
		{[]string{"admin", "heal"}, "want BUCKET[/PREFIX]"},
		{[]string{"admin", "heal", "b", "--job", "3"}, "no BUCKET with --job"},
		{[]string{"admin", "heal", "b", "--quick=maybe"}, "invalid boolean value"},
		{[]string{"admin", "layout", "mode", "sometimes"}, "layout mode takes manual or auto"},
		{[]string{"admin", "layout", "frob"}, "unknown layout command"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, stderr bytes.Buffer
			err := run(tc.args, &out, &stderr)
			if code := exitCode(err, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) {
				t.Fatalf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr.String(), tc.want)
			}
		})
	}
}

func TestLayoutCall(t *testing.T) {
	cases := []struct {
		words        []string
		method, path string
		query        string
	}{
		{nil, http.MethodGet, "layout", ""},
		{[]string{"show"}, http.MethodGet, "layout", ""},
		{[]string{"mode", "manual"}, http.MethodPut, "layout", "mode=manual"},
		{[]string{"mode", "auto"}, http.MethodPut, "layout", "mode=auto"},
		{[]string{"apply"}, http.MethodPost, "layout/apply", ""},
	}
	for _, tc := range cases {
		m, p, q, err := layoutCall(tc.words)
		if err != nil || m != tc.method || p != tc.path || q.Encode() != tc.query {
			t.Errorf("layoutCall(%q) = %s %s ?%s, %v", tc.words, m, p, q.Encode(), err)
		}
	}
}

// A peer named by host:port goes straight to its shard API only with the
// cluster secret at hand and no gateway named; anything else goes through
// a gateway.
func TestDecommissionDirect(t *testing.T) {
	cases := []struct {
		target   string
		secret   string
		endpoint bool
		want     bool
	}{
		{"127.0.0.1:9100", "s", false, true},
		{"[::1]:9100", "s", false, true},
		{"127.0.0.1:9100", "", false, false},
		{"127.0.0.1:9100", "s", true, false},
		{"peer-3f2a", "s", false, false},
		{"host:http", "s", false, false},
	}
	for _, tc := range cases {
		t.Setenv("TESSERA_CLUSTER_SECRET", tc.secret)
		if got := direct(tc.target, tc.endpoint); got != tc.want {
			t.Errorf("direct(%q, secret %q, endpoint %v) = %v", tc.target, tc.secret, tc.endpoint, got)
		}
	}
}

// Flags come from their variables when not given, and given() tells
// either from the default.
func TestAdminFlagsFromEnv(t *testing.T) {
	t.Setenv("TESSERA_ENDPOINT", "gw:9000")
	t.Setenv("TESSERA_WAIT", "5m")
	cmd := newAdminCommand("heal", "heal", "")
	wait := cmd.fs.Duration("wait", 0, "")
	pos, err := cmd.parse([]string{"b/p", "--endpoint", "other:9000"}, &bytes.Buffer{})
	if err != nil || len(pos) != 1 || *cmd.endpoint != "other:9000" || *wait != 5*time.Minute || !cmd.given("wait") || cmd.given("ca-file") {
		t.Fatalf("pos %v, endpoint %s, wait %v, err %v", pos, *cmd.endpoint, *wait, err)
	}
}

// The client signs its calls as the gateway verifies them (a query with
// a space included), finds out by itself that the gateway serves TLS,
// trusts --ca-file, and reports an S3 error by its code and message.
func TestAdminClientTLSAndSigning(t *testing.T) {
	t.Setenv("TESSERA_ACCESS_KEY", "AK")
	t.Setenv("TESSERA_SECRET_KEY", "SK")
	v := &sigv4.Verifier{Region: "us-east-1", Lookup: func(ak string) (string, bool) { return "SK", ak == "AK" }}
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := v.Verify(r); err != nil {
			http.Error(w, "<Error><Code>SignatureDoesNotMatch</Code><Message>"+err.Error()+"</Message></Error>", http.StatusForbidden)
			return
		}
		if r.URL.Path != gateway.AdminPrefix+"heal" || r.URL.Query().Get("prefix") != "a b/" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte("<Error><Code>InvalidRequest</Code><Message>no such job</Message></Error>"))
			return
		}
		_ = json.NewEncoder(w).Encode(gateway.HealStatus{ID: "7"})
	}))
	defer ts.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := newAdminClient(strings.TrimPrefix(ts.URL, "https://"), ca)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var st gateway.HealStatus
	if err := c.do(ctx, http.MethodPost, "heal", map[string][]string{"bucket": {"b"}, "prefix": {"a b/"}}, &st); err != nil || st.ID != "7" {
		t.Fatalf("call: %+v, %v", st, err)
	}
	if !strings.HasPrefix(c.base, "https://") {
		t.Fatalf("base %s after a TLS gateway answered", c.base)
	}
	err = c.do(ctx, http.MethodGet, "heal", map[string][]string{"id": {"9"}}, &st)
	if err == nil || !strings.Contains(err.Error(), "InvalidRequest: no such job") {
		t.Fatalf("refusal: %v", err)
	}
	if _, err := newAdminClient(ts.URL, filepath.Join(t.TempDir(), "none.pem")); err == nil {
		t.Fatal("a missing --ca-file accepted")
	}
}
