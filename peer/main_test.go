package peer

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.uber.org/goleak"

	"tessera/meta"
	"tessera/storage"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var (
	ctx    = context.Background()
	secret = []byte("cluster secret for tests")
)

type testPeer struct {
	store  *storage.Store
	srv    *httptest.Server
	client *Client
}

// newPeer runs a server over a fresh store and returns a client for it.
// now, when set, is the server's clock.
func newPeer(t *testing.T, now func() time.Time) *testPeer {
	t.Helper()
	return newPeerWith(t, ServerConfig{Now: now})
}

// newPeerWith is newPeer with more of the server's configuration.
func newPeerWith(t *testing.T, cfg ServerConfig) *testPeer {
	t.Helper()
	st, err := storage.Open(t.TempDir(), storage.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Store, cfg.Secret = st, secret
	srv := httptest.NewServer(NewServer(cfg))
	c := NewClient(ClientConfig{ID: "p1", BaseURL: srv.URL, Secret: secret})
	t.Cleanup(func() {
		c.CloseIdleConnections()
		srv.Close()
		st.Close()
	})
	return &testPeer{store: st, srv: srv, client: c}
}

func stamp(nanos int64, writer string) meta.Stamp { return meta.Stamp{Nanos: nanos, Writer: writer} }

func mkBucket(t *testing.T, c *Client, name string) {
	t.Helper()
	if err := c.MakeBucket(ctx, meta.Bucket{Name: name, Created: time.Unix(100, 0).UTC()}); err != nil {
		t.Fatalf("make bucket: %v", err)
	}
}

// putObject stages each part and commits them through the client.
func putObject(t *testing.T, c *Client, bucket, key string, st meta.Stamp, parts ...[]byte) *meta.Object {
	t.Helper()
	o := &meta.Object{Bucket: bucket, Key: key, Stamp: st, ETag: "e", Code: meta.Code{K: 1},
		Distribution: []meta.PeerID{"p1"}, ModTime: time.Unix(0, st.Nanos).UTC()}
	var ids []string
	for i, p := range parts {
		id, err := c.StageShard(ctx, bytes.NewReader(p))
		if err != nil {
			t.Fatalf("stage: %v", err)
		}
		ids = append(ids, id)
		o.Parts = append(o.Parts, meta.Part{Number: i + 1, Size: int64(len(p)), ETag: "p"})
		o.Size += int64(len(p))
	}
	if err := c.Commit(ctx, o, ids); err != nil {
		t.Fatalf("commit: %v", err)
	}
	return o
}

// rawRequest builds a signed request by hand so tests can tamper with it.
func rawRequest(t *testing.T, base, method, target string, body []byte, key []byte, now time.Time) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, base+target, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != nil {
		if err := sign(req, key, now); err != nil {
			t.Fatal(err)
		}
	}
	return req
}
