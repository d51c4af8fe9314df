// Command vsminio measures tessera and MinIO side by side on one machine,
// through the same S3 client (minio-go), for the same cells: PUT and GET of
// 4KiB, 1MiB and 16MiB objects at 1, 8 and 32 requests in flight.
//
//	go run ./scripts/vsminio -tessera /tmp/tessera [-minio BIN] \
//	    [-rounds 4] [-dur 5s] [-cells REGEXP] [-cluster] [-out FILE]
//
// Without -minio, MinIO is built from its Go module at the release the
// project's figures were measured with, once, into the user's cache dir
// (installMinio).
//
// Method. Both servers are started by this program as child processes, each
// on a temp dir of the same local disk (tmpfs is refused: it would hide the
// disk), with the same code: tessera's embedded server (six peers, EC 4+2)
// and MinIO on six drives with EC:2. Both run for the whole measurement, so
// they share the machine's page cache, disk and background load alike.
//
// A round walks every selected cell; within a cell each server runs for -dur
// back to back, and which of the two goes first alternates by round. The two
// halves of a comparison are therefore seconds apart, in one window of
// machine load, and whatever drifts over minutes (other jobs on the machine,
// disk write-back, the page cache filling) hits both about equally; the
// alternation cancels the cost or benefit of going first (a cache warmed or
// dirtied by the other).
//
// The headline figure is the median over rounds of the per-round ratio
// tessera/MinIO. A ratio taken within one window cancels that window's load,
// and the median drops a round that a burst of outside work spoiled; a ratio
// of two medians could pair figures from different windows.
//
// Cost is reported as CPU seconds per GiB moved: utime+stime of each server
// process (all its threads) from /proc/PID/stat before and after its run of
// a cell, summed over rounds, over the bytes that run moved. It does not
// depend on throughput, so it stays comparable when one side is faster. The
// client's own CPU is not counted; it is the same code for both sides and
// shares the machine with them, which the ratio cancels. Peak RSS is each
// process's VmHWM at the end.
//
// With -cluster a third target runs in the same rounds: `tessera gateway`
// and six `tessera peer` processes on loopback, the layout of a real
// deployment; its CPU is all seven processes', and a second table gives
// its ratio to the embedded server.
//
// Every request error is printed and counted, and a cell with errors is
// marked FAIL in the table; the program then exits non-zero.
//
// With -scale N1,N2,... it measures instead how both servers hold many
// small objects in one bucket (fill rate, random HEAD and GET, listings
// with and without a delimiter, restart time, RSS, deletes and what stays
// on disk after them); see scale.go.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"
	"time"
)

type config struct {
	tessera, minio string
	rounds         int
	dur            time.Duration
	cells          *regexp.Regexp
	out            string
	tmp            string
	keep           bool
	cluster        bool
	scale          []int
	scaleWait      time.Duration
	// alone measures tessera without MinIO beside it (scale mode only):
	// for counts MinIO would take hours to fill, where only tessera's own
	// figures (restart, RSS, disk per object) are wanted.
	alone       bool
	scaleDelete bool
	// scaleDeleteN, when > 0, times deletes of only the first N keys:
	// deleting 10^6 objects takes longer than the rest of a run.
	scaleDeleteN int
}

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "vsminio:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	if cfg.minio == "" && !cfg.alone {
		cfg.minio, err = installMinio(ctx)
	}
	switch {
	case err == nil && len(cfg.scale) > 0:
		err = runScale(ctx, cfg)
	case err == nil:
		err = run(ctx, cfg)
	}
	if ctx.Err() != nil {
		err = fmt.Errorf("interrupted; servers stopped: %w", err)
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "vsminio:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (config, error) {
	fs := flag.NewFlagSet("vsminio", flag.ContinueOnError)
	var cfg config
	var cells string
	fs.StringVar(&cfg.tessera, "tessera", "", "tessera binary (required)")
	fs.StringVar(&cfg.minio, "minio", "", "minio binary (default: built once from its Go module into the user cache dir)")
	fs.IntVar(&cfg.rounds, "rounds", 4, "rounds over all cells")
	fs.DurationVar(&cfg.dur, "dur", 5*time.Second, "time each server spends on a cell per round")
	fs.StringVar(&cells, "cells", "", "regexp selecting cells by name, e.g. 'PUT 4KiB c=1$|GET 1MiB' (default: all)")
	fs.StringVar(&cfg.out, "out", "", "also write the report to this file")
	fs.StringVar(&cfg.tmp, "tmp", "/var/tmp", "parent of the servers' temp dirs; must be a local disk, not tmpfs")
	fs.BoolVar(&cfg.keep, "keep", false, "keep the temp dirs (data and server logs) afterwards")
	fs.BoolVar(&cfg.cluster, "cluster", false, "also measure a tessera cluster: one gateway and six peer processes on loopback")
	scale := fs.String("scale", "", "instead of the cells: fill both servers with small objects to each of these rising counts (e.g. 100000,1000000) and measure point reads, listings, restarts and deletes (see scale.go)")
	fs.DurationVar(&cfg.scaleWait, "scale-wait", 0, "with -scale: wait this long after deleting everything before counting what stays on disk")
	fs.BoolVar(&cfg.alone, "alone", false, "with -scale: measure tessera alone, without MinIO and without ratios")
	fs.BoolVar(&cfg.scaleDelete, "scale-delete", true, "with -scale: delete everything at the end and measure what stays")
	fs.IntVar(&cfg.scaleDeleteN, "scale-delete-n", 0, "with -scale: time deletes of only the first N keys (a multiple of 5000), and leave out the rows measured after deleting all")
	fs.Func("tessera-args", "extra flags for `tessera server`, space-separated (e.g. '--tombstone-grace 1m')", func(v string) error {
		tesseraArgs = strings.Fields(v)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if cfg.tessera == "" {
		return cfg, errors.New("-tessera is required")
	}
	if cfg.scaleDeleteN < 0 || cfg.scaleDeleteN%fillChunk != 0 {
		return cfg, fmt.Errorf("-scale-delete-n must be a multiple of %d", fillChunk)
	}
	if cfg.rounds < 1 || cfg.dur <= 0 {
		return cfg, errors.New("-rounds must be ≥ 1 and -dur > 0")
	}
	re, err := regexp.Compile(cells)
	if err != nil {
		return cfg, fmt.Errorf("-cells: %w", err)
	}
	cfg.cells = re
	cfg.scale, err = parseScale(*scale)
	if err == nil && cfg.alone && len(cfg.scale) == 0 {
		err = errors.New("-alone needs -scale")
	}
	return cfg, err
}

// run starts both servers, measures, reports, and stops the servers on
// every path out, including an interrupt.
func run(ctx context.Context, cfg config) (err error) {
	cells := selectCells(allCells(), cfg.cells)
	if len(cells) == 0 {
		return fmt.Errorf("-cells %q selects no cell", cfg.cells)
	}
	env := newEnvironment(cfg)
	env.loadStart = loadavg()
	targets, err := env.start(ctx)
	defer func() { err = errors.Join(err, env.stop()) }()
	if err != nil {
		return err
	}
	if err := prewrite(ctx, targets, cells); err != nil {
		return err
	}
	res, err := measure(ctx, cfg, targets, cells)
	if err != nil {
		return err
	}
	env.loadEnd = loadavg()
	rep := env.report(cells, targets, res)
	if err := emit(rep, cfg.out); err != nil {
		return err
	}
	if n := res.errors(); n > 0 {
		return fmt.Errorf("%d request errors; see FAIL rows", n)
	}
	return nil
}
