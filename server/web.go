package server

import (
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"tessera/gateway"
	"tessera/web"
)

// recentErrors is how many warn-or-worse log events the page shows.
const recentErrors = 50

// observer is what a gateway runs to be watched: its metrics registry, the
// S3 middleware, the bucket counter and the web server.
type observer struct {
	reg     *prometheus.Registry
	s3      *gateway.Metrics
	web     *web.Server
	buckets *bucketCounter
}

// observe builds the metrics and the web server, and returns the S3
// handler wrapped with request metrics and the web handler.
func (g *Gateway) observe(s3h http.Handler) (http.Handler, http.Handler, error) {
	reg := prometheus.NewRegistry()
	if err := reg.Register(collectors.NewGoCollector()); err != nil {
		return nil, nil, fmt.Errorf("metrics: %w", err)
	}
	if err := reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
		return nil, nil, fmt.Errorf("metrics: %w", err)
	}
	s3m, err := gateway.NewMetrics(reg)
	if err != nil {
		return nil, nil, fmt.Errorf("metrics: %w", err)
	}
	if err := reg.Register(&statusCollector{g: g}); err != nil {
		return nil, nil, fmt.Errorf("metrics: %w", err)
	}
	g.obs = &observer{reg: reg, s3: s3m}
	g.obs.buckets = startBucketCounter(g.layer, func() uint64 { return s3m.Totals().Mutations }, g.log)
	ws, err := web.New(web.Config{
		Source: g, Logger: g.cfg.Logger, Metrics: reg, Errors: g.errs,
		Credentials:  web.Credentials{AccessKey: g.cfg.Credentials.AccessKey, SecretKey: g.cfg.Credentials.SecretKey},
		Public:       g.cfg.WebPublic,
		MetricsToken: g.cfg.MetricsToken,
	})
	if err != nil {
		g.obs.buckets.close()
		return nil, nil, err
	}
	g.obs.web = ws
	return s3m.Wrap(s3h), ws, nil
}

// closeObserver stops the web sampler and the bucket counter; safe to
// call when observe never ran.
func (g *Gateway) closeObserver() error {
	if g.obs == nil {
		return nil
	}
	if g.obs.buckets != nil {
		g.obs.buckets.close()
	}
	var err error
	if g.obs.web != nil {
		err = g.obs.web.Close()
	}
	g.obs = nil
	return err
}
