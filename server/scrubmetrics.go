package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"tessera/scrub"
)

// Scrub figures per peer: a peer's own /metrics reports itself, a
// gateway's every peer it polled, both labelled with the peer's ID.
var (
	descScrubRunning = prometheus.NewDesc("tessera_scrub_running",
		"1 while a scrub pass is in progress on the peer.", []string{"peer"}, nil)
	descScrubPassObjects = prometheus.NewDesc("tessera_scrub_pass_objects",
		"Objects the pass in progress set out to check.", []string{"peer"}, nil)
	descScrubPassChecked = prometheus.NewDesc("tessera_scrub_pass_objects_checked",
		"Objects the pass in progress has checked.", []string{"peer"}, nil)
	descScrubStarted = prometheus.NewDesc("tessera_scrub_pass_started_timestamp_seconds",
		"Start of the pass in progress, or of the last one.", []string{"peer"}, nil)
	descScrubFinished = prometheus.NewDesc("tessera_scrub_pass_finished_timestamp_seconds",
		"End of the last finished pass.", []string{"peer"}, nil)
	descScrubNext = prometheus.NewDesc("tessera_scrub_next_pass_timestamp_seconds",
		"When the next scheduled pass starts (absent while one runs).", []string{"peer"}, nil)
	descScrubObjects = prometheus.NewDesc("tessera_scrub_objects_checked_total",
		"Objects whose record and shards the scrubber checked.", []string{"peer"}, nil)
	descScrubShards = prometheus.NewDesc("tessera_scrub_shards_checked_total",
		"Shard files and inline shards the scrubber verified.", []string{"peer"}, nil)
	descScrubBytes = prometheus.NewDesc("tessera_scrub_bytes_checked_total",
		"Shard bytes the scrubber read.", []string{"peer"}, nil)
	descScrubCorrupt = prometheus.NewDesc("tessera_scrub_corrupt_found_total",
		"Damaged copies (record or shard) the scrubber found.", []string{"peer"}, nil)
	descScrubRepaired = prometheus.NewDesc("tessera_scrub_repaired_total",
		"Damaged copies found by the scrubber that verified after repair.", []string{"peer"}, nil)
	descScrubPending = prometheus.NewDesc("tessera_scrub_findings_pending",
		"Damaged copies found by the scrubber and not repaired yet.", []string{"peer"}, nil)
)

var scrubDescs = []*prometheus.Desc{descScrubRunning, descScrubPassObjects, descScrubPassChecked, descScrubStarted,
	descScrubFinished, descScrubNext, descScrubObjects, descScrubShards, descScrubBytes, descScrubCorrupt,
	descScrubRepaired, descScrubPending}

// collectScrub sends one peer's scrub figures.
func collectScrub(ch chan<- prometheus.Metric, id string, r *scrub.Report) {
	g := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, id)
	}
	c := func(d *prometheus.Desc, v int64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), id)
	}
	running := 0.0
	if p := r.Pass; p != nil {
		running = 1
		g(descScrubPassObjects, float64(p.Objects))
		g(descScrubPassChecked, float64(p.ObjectsChecked))
		g(descScrubStarted, float64(p.Started.Unix()))
	} else if r.Last != nil {
		g(descScrubStarted, float64(r.Last.Started.Unix()))
	}
	g(descScrubRunning, running)
	if r.Last != nil {
		g(descScrubFinished, float64(r.Last.Finished.Unix()))
	}
	if !r.NextPass.IsZero() {
		g(descScrubNext, float64(r.NextPass.Unix()))
	}
	c(descScrubObjects, r.Totals.ObjectsChecked)
	c(descScrubShards, r.Totals.ShardsChecked)
	c(descScrubBytes, r.Totals.BytesChecked)
	c(descScrubCorrupt, r.Totals.CorruptFound)
	c(descScrubRepaired, r.Totals.Repaired)
	g(descScrubPending, float64(r.Pending))
}
