package peer

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// Server timeouts. There is no read or write timeout: shard bodies stream
// for as long as they need, and each call's ctx bounds it on the client.
const (
	ReadHeaderTimeout = 10 * time.Second
	IdleTimeout       = 2 * time.Minute
	ShutdownGrace     = 10 * time.Second
)

// Serve serves h on ln until ctx ends, then shuts down gracefully: requests
// in flight get ShutdownGrace to finish before their connections are cut.
// It returns nil after a ctx-initiated shutdown, or the error that stopped
// serving. ln is closed on return.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: ReadHeaderTimeout,
		IdleTimeout:       IdleTimeout,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
