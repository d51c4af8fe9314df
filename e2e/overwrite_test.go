package e2e

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// defaultRaceReads is the reads per overwrite-race scenario in a plain
// `go test`; TESSERA_OVERWRITE_READS sets another count (the fault
// suite's figure, 5,000 per scenario, is the soak mode's: TESSERA_SOAK).
const defaultRaceReads = 1500

// raceReaders is how many clients read while one overwrites.
const raceReaders = 4

func raceReads(t *testing.T) int {
	t.Helper()
	v := os.Getenv("TESSERA_OVERWRITE_READS")
	if v == "" && os.Getenv("TESSERA_SOAK") != "" {
		return 5000
	}
	if v == "" {
		return defaultRaceReads
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("TESSERA_OVERWRITE_READS=%q: want a positive count", v)
	}
	return n
}

// TestOverwriteRace has one client overwrite a key back to back while
// four others GET and HEAD it, on a healthy server and then with one
// peer stopped, for a 1 MiB object (shard files) and a 64 KiB one
// (inlined in its records). Every read must find the key, every body
// must be whole and exactly one of the versions written, and its ETag
// that version's. Each scenario makes defaultRaceReads reads, or
// TESSERA_OVERWRITE_READS. Before a replaced version's shard files
// outlived the commit that replaced them and the version decision told
// a key in flux from an absent one, 7–14% of healthy reads answered
// NoSuchKey, 1–2% of 1 MiB GETs were aborted after their 200, and
// with a peer down 11–17% of reads got 503.
//
//	TESSERA_OVERWRITE_READS=5000 go test ./e2e -run OverwriteRace -v
func TestOverwriteRace(t *testing.T) {
	needFull(t)
	c := startServer(t)
	const bucket = "race"
	mustMakeBucket(t, c, bucket)
	reads := raceReads(t)
	sizes := []struct {
		name string
		size int
	}{{"1MiB", 1 << 20}, {"64KiB", 64 << 10}}
	for _, sz := range sizes {
		t.Run("healthy/"+sz.name, func(t *testing.T) {
			runOverwriteRace(t, c, bucket, "healthy-"+sz.name, sz.size, reads)
		})
	}
	if err := c.srv.StopPeer(5); err != nil {
		t.Fatalf("stop peer: %v", err)
	}
	for _, sz := range sizes {
		t.Run("peer-down/"+sz.name, func(t *testing.T) {
			runOverwriteRace(t, c, bucket, "down-"+sz.name, sz.size, reads)
		})
	}
}

// raceVersions are the bodies a writer cycles through, each told apart
// by its SHA-256.
type raceVersions struct {
	bodies [][]byte
	bySum  map[[32]byte]int
	etags  map[string]int
}

func newRaceVersions(size, n int) raceVersions {
	v := raceVersions{bySum: map[[32]byte]int{}, etags: map[string]int{}}
	for i := range n {
		b := payload(int64(7000+i), size)
		v.bodies = append(v.bodies, b)
		v.bySum[sha256.Sum256(b)] = i
		sum := md5.Sum(b)
		v.etags[hex.EncodeToString(sum[:])] = i
	}
	return v
}

// raceCounts tallies what the readers saw.
type raceCounts struct {
	gets, heads, writes     atomic.Int64
	notFound, cutOff, wrong atomic.Int64
	otherErr, writeErr      atomic.Int64
	firstMu                 sync.Mutex
	first                   []string // the first few failures, for the log
}

func (rc *raceCounts) note(counter *atomic.Int64, format string, args ...any) {
	counter.Add(1)
	rc.firstMu.Lock()
	defer rc.firstMu.Unlock()
	if len(rc.first) < 8 {
		rc.first = append(rc.first, fmt.Sprintf(format, args...))
	}
}

func runOverwriteRace(t *testing.T, c *cluster, bucket, key string, size, reads int) {
	vs := newRaceVersions(size, 8)
	mustPut(t, c, bucket, key, vs.bodies[0], minio.PutObjectOptions{})
	core := noRetryCore(t, c)
	var rc raceCounts
	// About 10 ms a read on a loaded 2-core machine; room for three times that.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute+time.Duration(reads)*30*time.Millisecond)
	defer cancel()
	var done atomic.Int64
	var wg sync.WaitGroup
	stopWriter := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		raceWriter(ctx, core, bucket, key, vs, &rc, stopWriter)
	}()
	var rwg sync.WaitGroup
	start := time.Now()
	for range raceReaders {
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			for ctx.Err() == nil && done.Add(2) <= int64(reads)+1 {
				raceGet(ctx, core, bucket, key, vs, &rc)
				raceHead(ctx, core, bucket, key, size, vs, &rc)
			}
		}()
	}
	rwg.Wait()
	elapsed := time.Since(start)
	close(stopWriter)
	wg.Wait()
	total := rc.gets.Load() + rc.heads.Load()
	t.Logf("%s: %d reads (%d GET, %d HEAD) in %s against %d overwrites: %d NoSuchKey, %d cut off, %d wrong, %d other errors, %d failed writes",
		key, total, rc.gets.Load(), rc.heads.Load(), elapsed.Round(time.Millisecond), rc.writes.Load(),
		rc.notFound.Load(), rc.cutOff.Load(), rc.wrong.Load(), rc.otherErr.Load(), rc.writeErr.Load())
	for _, f := range rc.first {
		t.Log("  " + f)
	}
	if total < int64(reads) {
		t.Errorf("only %d of %d reads done before the deadline", total, reads)
	}
	if w := rc.writes.Load(); w < 20 {
		t.Errorf("only %d overwrites during the reads: the race was not exercised", w)
	}
	if rc.notFound.Load()+rc.cutOff.Load()+rc.wrong.Load()+rc.otherErr.Load()+rc.writeErr.Load() > 0 {
		t.Errorf("want 0 NoSuchKey, 0 cut-off, 0 wrong bodies, 0 other errors and 0 failed writes")
	}
}

// noRetryCore is a client that reports every error as it comes: minio-go
// would otherwise retry 503s and hide them.
func noRetryCore(t *testing.T, c *cluster) *minio.Core {
	t.Helper()
	cr := c.srv.Credentials()
	core, err := minio.NewCore(c.srv.S3Addr(), &minio.Options{
		Creds: credentials.NewStaticV4(cr.AccessKey, cr.SecretKey, ""), Region: "us-east-1", MaxRetries: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	return core
}

func raceWriter(ctx context.Context, core *minio.Core, bucket, key string, vs raceVersions, rc *raceCounts, stop <-chan struct{}) {
	for i := 1; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		b := vs.bodies[i%len(vs.bodies)]
		_, err := core.PutObject(ctx, bucket, key, bytes.NewReader(b), int64(len(b)), "", "", minio.PutObjectOptions{})
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			rc.note(&rc.writeErr, "PUT: %v", err)
			continue
		}
		rc.writes.Add(1)
	}
}

func raceGet(ctx context.Context, core *minio.Core, bucket, key string, vs raceVersions, rc *raceCounts) {
	body, info, _, err := core.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
	if ctx.Err() != nil {
		return
	}
	rc.gets.Add(1)
	if err != nil {
		classifyReadErr(rc, "GET", err)
		return
	}
	defer body.Close()
	got, err := io.ReadAll(body)
	switch {
	case err != nil || int64(len(got)) != info.Size:
		rc.note(&rc.cutOff, "GET: body cut off after %d of %d bytes: %v", len(got), info.Size, err)
		return
	}
	i, ok := vs.bySum[sha256.Sum256(got)]
	if !ok {
		rc.note(&rc.wrong, "GET: %d bytes that are none of the versions written", len(got))
		return
	}
	if j, ok := vs.etags[strings.Trim(info.ETag, `"`)]; !ok || j != i {
		rc.note(&rc.wrong, "GET: body of version %d under ETag %s", i, info.ETag)
	}
}

func raceHead(ctx context.Context, core *minio.Core, bucket, key string, size int, vs raceVersions, rc *raceCounts) {
	info, err := core.StatObject(ctx, bucket, key, minio.StatObjectOptions{})
	if ctx.Err() != nil {
		return
	}
	rc.heads.Add(1)
	if err != nil {
		classifyReadErr(rc, "HEAD", err)
		return
	}
	if _, ok := vs.etags[strings.Trim(info.ETag, `"`)]; !ok || info.Size != int64(size) {
		rc.note(&rc.wrong, "HEAD: ETag %s size %d is none of the versions written", info.ETag, info.Size)
	}
}

// classifyReadErr counts a failed request. One that got no status at all
// was aborted by the server after it had started the response (it had
// no way left to report the failure): a cut-off body.
func classifyReadErr(rc *raceCounts, op string, err error) {
	resp := minio.ToErrorResponse(err)
	switch {
	case resp.Code == "NoSuchKey" || resp.StatusCode == 404:
		rc.note(&rc.notFound, "%s: %v", op, err)
	case resp.StatusCode == 0:
		rc.note(&rc.cutOff, "%s: aborted: %v", op, err)
	default:
		rc.note(&rc.otherErr, "%s: %v", op, err)
	}
}
