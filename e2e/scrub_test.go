package e2e

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"tessera/meta"
	"tessera/storage"
)

// TestScrubRepairsUnreadBitrot: six peer processes and two gateways, EC
// 4+2, the gateways' record scanners off. Bytes are flipped inside the shard
// data of every object on two peers; `tessera admin scrub --wait` makes
// every peer verify what it holds and waits until the gateway repaired
// what they found. Then two other peers get the same treatment: every
// object, none of which was read in between, must still read back
// byte-exact, whole and by range.
func TestScrubRepairsUnreadBitrot(t *testing.T) {
	needFull(t)
	c := newProcCluster(t)
	gw := c.startGateway("--scan-interval", "0", "--web-public")
	for range 6 {
		c.startPeer()
	}
	gw2 := c.startGateway("--scan-interval", "0")
	c.waitAlive(6)
	c.waitEpoch(6)
	mc, core := newMinio(t, gw.api, c.access, c.secret)
	makeBucketSoon(t, mc, "rot")
	want := scrubObjects(t, mc, core, "rot")
	waitUntil(t, 60*time.Second, "every object on all six peers", func() bool {
		for key := range want {
			if shardsComplete(c.peers, "rot", key, 6) != "" {
				return false
			}
		}
		return true
	})

	c.stop(c.peers[0])
	c.stop(c.peers[1])
	c.waitAlive(4)
	flipped := flipShardData(t, "rot", want, c.peers[0], c.peers[1])
	c.start(c.peers[0])
	c.start(c.peers[1])
	c.waitAlive(6)
	waitListening(t, c.peers[0], c.peers[1])
	if flipped < 2*(len(want)-2) { // the two 0-byte objects have no shard bytes
		t.Fatalf("damaged %d copies of %d objects on two peers; the test does not cover every object", flipped, len(want))
	}
	// Started without waiting, through the other gateway: the lead
	// gateway's own polls of the peers' findings drive the repairs, as
	// for a scheduled pass.
	start := time.Now()
	adminScrub(t, c, gw2)
	checkScrubStatus(t, gw, flipped)
	t.Logf("%d damaged copies found and repaired %v after admin scrub", flipped, time.Since(start).Round(time.Millisecond))
	// A second pass, waited for, finds nothing more.
	out := adminScrub(t, c, gw, "--wait", "3m")
	if !strings.Contains(out, "0 damaged copies found") {
		t.Errorf("a second pass after the repairs: %s", out)
	}

	c.stop(c.peers[2])
	c.stop(c.peers[3])
	c.waitAlive(4)
	flipShardData(t, "rot", want, c.peers[2], c.peers[3])
	c.start(c.peers[2])
	c.start(c.peers[3])
	c.waitAlive(6)
	waitListening(t, c.peers[2], c.peers[3])
	for key, data := range want {
		obj, err := mc.GetObject(context.Background(), "rot", key, minio.GetObjectOptions{})
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		got, err := io.ReadAll(obj)
		obj.Close()
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s: GET after two more peers rotted: %d bytes, err %v (want %d bytes)", key, len(got), err, len(data))
		}
		if len(data) < 10 {
			continue
		}
		var o minio.GetObjectOptions
		lo, hi := int64(len(data)/3), int64(len(data)-2)
		_ = o.SetRange(lo, hi)
		obj, err = mc.GetObject(context.Background(), "rot", key, o)
		if err != nil {
			t.Fatalf("%s: range: %v", key, err)
		}
		got, err = io.ReadAll(obj)
		obj.Close()
		if err != nil || !bytes.Equal(got, data[lo:hi+1]) {
			t.Errorf("%s: range GET after two more peers rotted: %d bytes, err %v", key, len(got), err)
		}
	}
}

// scrubObjects writes objects of every shape the store keeps differently:
// empty and small ones inline in their records, one block, many blocks,
// and a multipart upload.
func scrubObjects(t *testing.T, mc *minio.Client, core *minio.Core, bucket string) map[string][]byte {
	t.Helper()
	ctx := context.Background()
	want := map[string][]byte{}
	for i, size := range []int{0, 1000, 100 << 10, 200 << 10, 1<<20 + 1, 3<<20 + 99} {
		for j := range 3 {
			key := fmt.Sprintf("obj-%d-%d", size, j)
			if size == 0 && j > 1 {
				continue
			}
			want[key] = payload(int64(10*i+j), size)
			if _, err := mc.PutObject(ctx, bucket, key, bytes.NewReader(want[key]), int64(size), minio.PutObjectOptions{}); err != nil {
				t.Fatalf("put %s: %v", key, err)
			}
		}
	}
	big := payload(99, 11<<20)
	id, err := core.NewMultipartUpload(ctx, bucket, "multi", minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var parts []minio.CompletePart
	for i, off := 0, 0; off < len(big); i, off = i+1, off+5<<20 {
		end := min(off+5<<20, len(big))
		p, err := core.PutObjectPart(ctx, bucket, "multi", id, i+1, bytes.NewReader(big[off:end]), int64(end-off), minio.PutObjectPartOptions{})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, minio.CompletePart{PartNumber: i + 1, ETag: p.ETag})
	}
	if _, err := core.CompleteMultipartUpload(ctx, bucket, "multi", id, parts, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	want["multi"] = big
	return want
}

// flipShardData flips bytes inside the shard data the peers hold for the
// keys of bucket: in every shard file (after the first block's checksum,
// in the middle and at the end) and in the inline shard bytes of every
// record that has some. Records live in the peers' indexes, so a peer
// running in another process must be stopped meanwhile. It returns how
// many copies (one object on one peer) it damaged.
func flipShardData(t *testing.T, bucket string, keys map[string][]byte, peers ...*proc) int {
	t.Helper()
	copies := map[string]bool{}
	for _, p := range peers {
		err := filepath.WalkDir(filepath.Join(p.dir, "buckets"), func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() || strings.Contains(path, string(filepath.Separator)+"uploads"+string(filepath.Separator)) {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil || !strings.HasPrefix(d.Name(), "part.") || len(b) <= 8 {
				return err
			}
			for _, at := range []int{5, len(b) / 2, len(b) - 1} {
				b[at] ^= 0x20
			}
			copies[filepath.Dir(filepath.Dir(path))] = true // the object dir
			return os.WriteFile(path, b, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
		for key := range keys {
			o, _, err := storage.Inspect(p.dir, bucket, key)
			if err != nil || !o.Inlined {
				continue
			}
			rec, err := meta.MarshalObject(o)
			if err != nil {
				t.Fatal(err)
			}
			at, ok := inlineByte(rec)
			if !ok {
				continue
			}
			if err := storage.DamageRecordAt(p.dir, bucket, key, func(int) int { return at }); err != nil {
				t.Fatal(err)
			}
			copies[p.dir+"/"+key] = true
		}
	}
	return len(copies)
}

// waitListening waits until the peers' shard APIs accept connections: a
// peer restarted within gossip's failure timeout is alive to the
// gateways before it serves.
func waitListening(t *testing.T, peers ...*proc) {
	t.Helper()
	for _, p := range peers {
		waitUntil(t, 60*time.Second, p.name+" listening", func() bool {
			conn, err := net.DialTimeout("tcp", p.api, time.Second)
			if err == nil {
				conn.Close()
			}
			return err == nil
		})
	}
}

// inlineByte finds a byte of the inline shard in an object record
// ("TSM" | format | bodyLen u32 | body | inlineLen u32 | inline | crc32c).
func inlineByte(rec []byte) (int, bool) {
	if len(rec) < 12 || string(rec[:3]) != "TSM" {
		return 0, false
	}
	jl := int(binary.BigEndian.Uint32(rec[4:8]))
	if 8+jl+4 > len(rec) {
		return 0, false
	}
	il := int(binary.BigEndian.Uint32(rec[8+jl : 12+jl]))
	if il == 0 {
		return 0, false
	}
	return 12 + jl + il/2, true
}

// adminScrub runs `tessera admin scrub` against the gateway.
func adminScrub(t *testing.T, c *procCluster, gw *proc, args ...string) string {
	t.Helper()
	cmd := exec.Command(c.bin, append([]string{"admin", "scrub", "--endpoint", gw.api}, args...)...)
	cmd.Env = c.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("tessera admin scrub %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// checkScrubStatus reads the scrub figures on /api/status and /metrics.
func checkScrubStatus(t *testing.T, gw *proc, flipped int) {
	t.Helper()
	var st struct {
		Scrub struct {
			Peers []struct {
				ID           string     `json:"id"`
				LastFinished *time.Time `json:"last_finished"`
				NextPass     *time.Time `json:"next_pass"`
			} `json:"peers"`
			CorruptFound int64 `json:"corrupt_found"`
			Repaired     int64 `json:"repaired"`
			Pending      int64 `json:"pending"`
		} `json:"scrub"`
	}
	// The gateway shows what it polled last, every poll interval.
	waitUntil(t, 90*time.Second, "the status page shows every finding repaired", func() bool {
		if err := getJSON("http://"+gw.web+"/api/status", &st); err != nil {
			return false
		}
		return len(st.Scrub.Peers) == 6 && st.Scrub.Repaired >= int64(flipped) && st.Scrub.Pending == 0
	})
	if st.Scrub.CorruptFound < int64(flipped) {
		t.Errorf("/api/status: %d damaged copies found, %d were made", st.Scrub.CorruptFound, flipped)
	}
	for _, p := range st.Scrub.Peers {
		if p.LastFinished == nil || p.NextPass == nil {
			t.Errorf("/api/status: peer %s: last finished %v, next pass %v", p.ID, p.LastFinished, p.NextPass)
		}
	}
	resp, err := http.Get("http://" + gw.web + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, m := range []string{"tessera_scrub_corrupt_found_total", "tessera_scrub_repaired_total",
		"tessera_scrub_shards_checked_total", "tessera_scrub_next_pass_timestamp_seconds"} {
		if !bytes.Contains(body, []byte(m+"{")) {
			t.Errorf("/metrics lacks %s", m)
		}
	}
}

func getJSON(url string, v any) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// TestScrubEmbedded is the same story on `tessera server`: its embedded
// peers scrub too, and `tessera admin scrub` reaches them through the
// embedded gateway.
func TestScrubEmbedded(t *testing.T) {
	c := startServer(t)
	want := faultObjects(t, c, "rot")
	var peers []*proc
	for i, dir := range c.srv.PeerDirs() {
		peers = append(peers, &proc{name: fmt.Sprintf("peer%d", i+1), dir: dir})
	}
	waitUntil(t, 60*time.Second, "every object on all six peers", func() bool {
		for key := range want {
			if shardsComplete(peers, "rot", key, 6) != "" {
				return false
			}
		}
		return true
	})
	flipped := flipShardData(t, "rot", want, peers[0], peers[3])
	creds := c.srv.Credentials()
	cmd := exec.Command(tesseraBinary(t), "admin", "scrub", "--endpoint", c.srv.S3Addr(), "--wait", "3m")
	cmd.Env = append(os.Environ(), "TESSERA_ACCESS_KEY="+creds.AccessKey, "TESSERA_SECRET_KEY="+creds.SecretKey)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("tessera admin scrub: %v\n%s", err, out)
	}
	t.Logf("admin scrub --wait after %d damaged copies: %s", flipped, bytes.TrimSpace(out))
	flipShardData(t, "rot", want, peers[1], peers[4])
	checkAll(t, c, "rot", want)
}
