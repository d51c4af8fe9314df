package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/rs/zerolog"

	"tessera/meta"
	"tessera/server"
)

func TestSimCommandJSON(t *testing.T) {
	var out, errb bytes.Buffer
	err := run([]string{"sim", "--requests", "300", "--seeds", "1", "--rho", "0.2", "--burst", "10,30",
		"--policies", "eta,serpt-r", "--format", "json", "--svg", t.TempDir()}, &out, &errb)
	if err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	var got struct {
		Runs []struct {
			Policy string  `json:"policy"`
			Burst  int     `json:"burst"`
			Mean   float64 `json:"mean_ms"`
			Amp    float64 `json:"amp"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || len(got.Runs) != 4 {
		t.Fatalf("%v: %s", err, out.String())
	}
	for _, r := range got.Runs {
		if r.Mean <= 0 || r.Amp < 1 {
			t.Fatalf("implausible run %+v", r)
		}
	}
	for _, bad := range [][]string{
		{"--policies", "nope"},
		{"--codes", "4+9"}, // wider than 10 peers
		{"--codes", "4-2"}, // not K+M
	} {
		args := append([]string{"sim", "--requests", "10", "--seeds", "1"}, bad...)
		if err := run(args, &out, &errb); err == nil {
			t.Fatalf("%v accepted", bad)
		}
	}
}

// The live benchmark's parameters: one 4+2 code, mixed NICs without
// background load, slower peers.
func TestSimCommandLiveParameters(t *testing.T) {
	var out, errb bytes.Buffer
	err := run([]string{"sim", "--requests", "300", "--seeds", "1", "--rho", "0.5", "--burst", "10",
		"--policies", "eta", "--codes", "4+2", "--mixed-nics", "--peer-gbps", "0.1"}, &out, &errb)
	if err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	if !strings.Contains(out.String(), "mixed-nics=true, codes=4+2, peer-order=true") {
		t.Fatalf("parameters not echoed:\n%s", out.String())
	}
}

// TestBenchAgainstEmbedded runs `tessera bench` against an in-process
// server: objects are written, each policy is switched in through the
// SigV4-authenticated admin API, and every GET succeeds.
func TestBenchAgainstEmbedded(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	os.Unsetenv("AWS_CA_BUNDLE")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := server.DefaultEmbeddedConfig()
	cfg.Dirs = []string{t.TempDir()}
	cfg.Address, cfg.WebAddress = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Credentials = server.Credentials{AccessKey: "benchkey", SecretKey: "benchsecret123456", ClusterSecret: "clustersecret123456"}
	cfg.Logger = zerolog.Nop()
	cfg.FetchPool = 4
	cfg.Classes = map[string]meta.Code{"EC11": {K: 1, M: 1}, "EC22": {K: 2, M: 2}}
	srv, err := server.StartEmbedded(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	t.Setenv("TESSERA_ACCESS_KEY", "benchkey")
	t.Setenv("TESSERA_SECRET_KEY", "benchsecret123456")
	var out, errb bytes.Buffer
	// The endpoint twice: GETs alternate between two clients and the
	// policy is switched on each, as with two gateways.
	err = runBench(ctx, []string{"--endpoint", srv.S3Addr() + "," + srv.S3Addr(), "--objects", "6", "--requests", "20", "--burst", "5",
		"--rho", "0.2", "--capacity-gbps", "1", "--max-size", "300000", "--policies", "load,fcfs-r",
		"--storage-classes", "EC11,EC22"}, &out, &errb)
	if err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	// Object i went into class i mod 2, as the simulator's replay gives
	// object i code i mod 2 of --codes 1+1,2+2.
	mc, err := minio.New(srv.S3Addr(), &minio.Options{Creds: credentials.NewStaticV4("benchkey", "benchsecret123456", "")})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"EC11", "EC22", "EC11"} {
		info, err := mc.StatObject(ctx, "tessera-bench", fmt.Sprintf("obj-%05d", i), minio.StatObjectOptions{})
		if got := info.Metadata.Get("X-Amz-Storage-Class"); err != nil || got != want {
			t.Fatalf("object %d: class %q, %v; want %s", i, got, err, want)
		}
	}
	for _, want := range []string{"policy load", "policy fcfs-r"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("no %q in:\n%s", want, out.String())
		}
	}
	if got := srv.Gateway().SchedStatus().Policy; got != "fcfs-r" {
		t.Fatalf("gateway policy %q after the bench, want the last one run", got)
	}
	if st := srv.Gateway().SchedStatus(); st.Finished == 0 || st.Slots != 4 {
		t.Fatalf("status %+v", st)
	}

	// Its JSON carries each burst's mean, and the simulator, replaying the
	// same workload, compares its order of the policies with it.
	out.Reset()
	err = runBench(ctx, []string{"--endpoint", srv.S3Addr(), "--objects", "6", "--requests", "20", "--burst", "5",
		"--rho", "0.2", "--capacity-gbps", "1", "--max-size", "300000", "--policies", "load,fcfs-r", "--format", "json"}, &out, &errb)
	if err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	var live struct {
		Runs []struct {
			BurstMeans []float64 `json:"burst_mean_ms"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(out.Bytes(), &live); err != nil || len(live.Runs) != 2 || len(live.Runs[0].BurstMeans) != 4 {
		t.Fatalf("%v: want 2 runs of 4 bursts: %s", err, out.String())
	}
	path := t.TempDir() + "/live.json"
	if err := os.WriteFile(path, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	var rep bytes.Buffer
	err = run([]string{"sim", "--objects", "6", "--requests", "20", "--burst", "5", "--rho", "0.2", "--seeds", "2",
		"--peer-gbps", "0.1", "--max-size", "300000", "--policies", "load,fcfs-r", "--frontend", "2ms", "--against", path}, &rep, &errb)
	if err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	for _, want := range []string{"ρ=0.2 p=5  Kendall τ", "simulated: ", "live:      ", "of 1 pairs ordered differently"} {
		if !strings.Contains(rep.String(), want) {
			t.Fatalf("no %q in the comparison:\n%s", want, rep.String())
		}
	}
}
