package web

import (
	"net/http"
	"net/http/pprof"
)

// profiles serves Go's runtime profiles under /debug/pprof/ (CPU, heap,
// goroutines, mutex and block contention, execution traces), so a running
// node can be profiled with `go tool pprof`, e.g.
//
//	go tool pprof -http : 'http://AK:SK@HOST:9001/debug/pprof/profile?seconds=30'
//
// They reveal the process's internals and cost CPU while they run, so they
// need the credentials even when the status page is public.
func profiles(mux *http.ServeMux, g *gate) {
	mux.Handle("GET /debug/pprof/", g.admin(http.HandlerFunc(pprof.Index)))
	mux.Handle("GET /debug/pprof/cmdline", g.admin(http.HandlerFunc(pprof.Cmdline)))
	mux.Handle("GET /debug/pprof/profile", g.admin(http.HandlerFunc(pprof.Profile)))
	mux.Handle("GET /debug/pprof/symbol", g.admin(http.HandlerFunc(pprof.Symbol)))
	mux.Handle("POST /debug/pprof/symbol", g.admin(http.HandlerFunc(pprof.Symbol)))
	mux.Handle("GET /debug/pprof/trace", g.admin(http.HandlerFunc(pprof.Trace)))
}
