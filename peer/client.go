package peer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"tessera/meta"
)

// ClientConfig configures a Client for one peer.
type ClientConfig struct {
	ID meta.PeerID
	// BaseURL is the peer's API root, e.g. "http://10.0.0.5:7001".
	BaseURL string
	// Secret is the cluster secret; empty makes every call fail.
	Secret []byte
	// HTTP is the client to use (nil: one without an overall timeout,
	// since shard streams are long; deadlines come from each call's ctx).
	HTTP *http.Client
}

// Client calls one storage peer's shard API. It implements
// object.ShardClient and is safe for concurrent use.
type Client struct {
	id   meta.PeerID
	base string
	key  []byte
	hc   *http.Client
}

// NewClient returns a client for the peer at cfg.BaseURL.
func NewClient(cfg ClientConfig) *Client {
	hc := cfg.HTTP
	if hc == nil {
		hc = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	return &Client{id: cfg.ID, base: strings.TrimRight(cfg.BaseURL, "/"), key: deriveKey(cfg.Secret), hc: hc}
}

// ID returns the peer this client calls.
func (c *Client) ID() meta.PeerID { return c.id }

// CloseIdleConnections closes the client's idle keep-alive connections.
func (c *Client) CloseIdleConnections() { c.hc.CloseIdleConnections() }

// RemoteError is an error answer from the peer. It unwraps to the meta or
// storage sentinel of its Code (nil for codes this client does not know).
type RemoteError struct {
	Peer    meta.PeerID
	Op      string
	Status  int
	Code    string
	Message string
	err     error
}

func (e *RemoteError) Error() string {
	return fmt.Sprintf("peer %s: %s: %s (%d): %s", e.Peer, e.Op, e.Code, e.Status, e.Message)
}

func (e *RemoteError) Unwrap() error { return e.err }

// do sends one signed request and returns the response of a 2xx answer;
// any other answer becomes a *RemoteError and its body is closed.
func (c *Client) do(ctx context.Context, method, path string, q url.Values, body io.Reader) (*http.Response, error) {
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, fmt.Errorf("peer %s: %s %s: %w", c.id, method, path, err)
	}
	if err := sign(req, c.key, time.Now()); err != nil {
		return nil, fmt.Errorf("peer %s: %w", c.id, err)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("peer %s: %s %s: %w", c.id, method, path, err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	return nil, c.remoteError(method+" "+path, resp)
}

func (c *Client) remoteError(op string, resp *http.Response) error {
	e := &RemoteError{Peer: c.id, Op: op, Status: resp.StatusCode, Code: codeInternal}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var we wireError
	if json.Unmarshal(b, &we) == nil && we.Code != "" {
		e.Code, e.Message, e.err = we.Code, we.Message, sentinelOfWire(we)
	} else {
		e.Message = strings.TrimSpace(string(b))
	}
	return e
}

// call sends a request whose answer carries no body worth reading.
func (c *Client) call(ctx context.Context, method, path string, q url.Values, body io.Reader) error {
	resp, err := c.do(ctx, method, path, q, body)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, maxSmallBody))
	return resp.Body.Close()
}

// getRecord fetches a record and decodes it into v, returning its inline
// blob. A record damaged in transit fails with meta.ErrCorrupt.
func (c *Client) getRecord(ctx context.Context, path string, q url.Values, v any) ([]byte, error) {
	b, err := c.getRaw(ctx, path, q)
	if err != nil {
		return nil, err
	}
	inline, err := meta.Unmarshal(b, v)
	if err != nil {
		return nil, fmt.Errorf("peer %s: GET %s: %w", c.id, path, err)
	}
	return inline, nil
}

// getRaw fetches an encoded record.
func (c *Client) getRaw(ctx context.Context, path string, q url.Values) ([]byte, error) {
	resp, err := c.do(ctx, http.MethodGet, path, q, nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxRecordBody+1))
	if err != nil {
		return nil, fmt.Errorf("peer %s: GET %s: %w", c.id, path, err)
	}
	return b, nil
}

// getJSON fetches a JSON answer into v.
func (c *Client) getJSON(ctx context.Context, method, path string, q url.Values, body io.Reader, v any) error {
	resp, err := c.do(ctx, method, path, q, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxRecordBody)).Decode(v); err != nil {
		return fmt.Errorf("peer %s: %s %s: decode answer: %w", c.id, method, path, err)
	}
	return nil
}

// recordBody encodes v (with inline) as a request body.
func recordBody(v any, inline []byte) (io.Reader, error) {
	b, err := meta.Marshal(v, inline)
	if err != nil {
		return nil, err
	}
	return bytes.NewReader(b), nil
}

// guardedReader fails every Read once its call has returned. The HTTP
// transport may go on reading a request body in the background after Do
// returns (an early error answer, say); the caller's reader must not be
// touched after StageShard hands it back.
type guardedReader struct {
	r    io.Reader
	done atomic.Bool
}

func (g *guardedReader) Read(p []byte) (int, error) {
	if g.done.Load() {
		return 0, errors.New("request body read after the call returned")
	}
	return g.r.Read(p)
}
