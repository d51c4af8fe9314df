package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"tessera/web"
)

// peerWeb serves a storage peer's probes and metrics on
// PeerConfig.WebAddress. A peer has no S3 credentials, so it serves no
// status page: the gateways show the cluster.
type peerWeb struct {
	srv  *http.Server
	done chan struct{}
}

// startWeb serves /health/* and /metrics when addr is set.
func (p *Peer) startWeb(addr, token string) error {
	if addr == "" {
		return nil
	}
	reg := prometheus.NewRegistry()
	for _, c := range []prometheus.Collector{collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), &peerCollector{p: p}} {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("peer %s: metrics: %w", p.id, err)
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("peer %s: listen %s: %w", p.id, addr, err)
	}
	w := &peerWeb{done: make(chan struct{}), srv: &http.Server{Handler: web.Probes(p.ready, reg, token),
		ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, ErrorLog: zerologStd(p.log)}}
	go func() {
		defer close(w.done)
		if err := w.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			p.log.Error().Err(err).Msg("web server stopped")
		}
	}()
	p.web = w
	p.log.Info().Str("web", ln.Addr().String()).Msg("peer web started")
	return nil
}

// ready: the peer can take writes when its store answers, has room and
// the peer is in gossip.
func (p *Peer) ready() error {
	if p.node == nil {
		return errors.New("not ready: not in gossip yet")
	}
	if err := p.store.Failed(); err != nil {
		return fmt.Errorf("not ready: %w; restart the peer", err)
	}
	sp, err := p.store.Space()
	if err != nil {
		return fmt.Errorf("not ready: store: %w", err)
	}
	if sp.Full {
		return fmt.Errorf("not ready: disk full: %d bytes free of %d, new shards refused", sp.Free, sp.Capacity)
	}
	return nil
}

func (p *Peer) closeWeb() error {
	if p.web == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := p.web.srv.Shutdown(ctx)
	if err != nil {
		err = p.web.srv.Close()
	}
	<-p.web.done
	p.web = nil
	return err
}

var (
	descPeerSent   = prometheus.NewDesc("tessera_peer_sent_bytes_total", "Shard API response bytes sent.", nil, nil)
	descPeerRecv   = prometheus.NewDesc("tessera_peer_received_bytes_total", "Shard API request bytes received.", nil, nil)
	descPeerActive = prometheus.NewDesc("tessera_peer_requests_active", "Shard API requests in progress.", nil, nil)
	descPeerCap    = prometheus.NewDesc("tessera_peer_capacity_bytes", "Capacity the peer advertises.", nil, nil)
	descPeerFree   = prometheus.NewDesc("tessera_peer_free_bytes", "Free bytes the peer advertises.", nil, nil)
	descPeerFull   = prometheus.NewDesc("tessera_peer_disk_full", "1 while the peer's store is full and refuses new shards.", nil, nil)
)

// peerCollector reads the shard API meter, the store and gossip at scrape
// time.
type peerCollector struct{ p *Peer }

func (c *peerCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range append([]*prometheus.Desc{descPeerSent, descPeerRecv, descPeerActive, descPeerCap, descPeerFree,
		descPeerFull, descMembers}, scrubDescs...) {
		ch <- d
	}
}

func (c *peerCollector) Collect(ch chan<- prometheus.Metric) {
	p := c.p
	sent, recv := p.meter.Totals()
	ch <- prometheus.MustNewConstMetric(descPeerSent, prometheus.CounterValue, float64(sent))
	ch <- prometheus.MustNewConstMetric(descPeerRecv, prometheus.CounterValue, float64(recv))
	ch <- prometheus.MustNewConstMetric(descPeerActive, prometheus.GaugeValue, float64(p.meter.Active()))
	if sp, err := p.store.Space(); err == nil {
		full := 0.0
		if sp.Full {
			full = 1
		}
		ch <- prometheus.MustNewConstMetric(descPeerCap, prometheus.GaugeValue, float64(sp.Capacity))
		ch <- prometheus.MustNewConstMetric(descPeerFree, prometheus.GaugeValue, float64(sp.Free))
		ch <- prometheus.MustNewConstMetric(descPeerFull, prometheus.GaugeValue, full)
	}
	r := p.ScrubReport()
	collectScrub(ch, p.id, &r)
	if p.node == nil {
		return
	}
	counts := map[[2]string]int{}
	for _, m := range p.node.Members() {
		counts[[2]string{string(m.Role), m.State.String()}]++
	}
	for k, v := range counts {
		ch <- prometheus.MustNewConstMetric(descMembers, prometheus.GaugeValue, float64(v), k[0], k[1])
	}
}
