package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"math/rand"
	"os"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"tessera/meta"
	"tessera/server"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// net/http keeps idle client connections' readers alive until the
		// transport closes them; clients below close their transports.
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
	)
}

// fullSuiteEnv selects the whole end-to-end suite: the fault, crash, soak
// and data-movement scenarios, each a minute or more of a cluster of
// processes. Without it `go test ./...` runs the rest, every S3 path
// against a real server and one scenario of each kind (a gateway killed
// between commits, wiped and corrupt peers, a peer dying under the status
// page, TLS between peers), in about two minutes; .ci/run sets it and runs
// everything.
const fullSuiteEnv = "TESSERA_E2E"

// needFull skips t unless the full suite runs.
func needFull(t *testing.T) {
	t.Helper()
	if os.Getenv(fullSuiteEnv) != "full" {
		t.Skipf("in the full end-to-end suite, which takes half an hour: %s=full go test ./e2e (.ci/run does)", fullSuiteEnv)
	}
}

// cluster is one embedded server started for a test.
type cluster struct {
	srv  *server.Embedded
	dir  string
	mc   *minio.Client
	core *minio.Core
}

const testBlockSize = 1 << 20

// startServer runs `tessera server DIR` in-process with --peers 6 --ec 4+2
// on free loopback ports, and stops it when the test ends.
func startServer(t testing.TB, mutate ...func(*server.EmbeddedConfig)) *cluster {
	t.Helper()
	dir := t.TempDir()
	cfg := server.DefaultEmbeddedConfig()
	cfg.Dirs = []string{dir}
	cfg.Address = "127.0.0.1:0"
	cfg.WebAddress = "127.0.0.1:0"
	cfg.Peers = 6
	cfg.Code = meta.Code{K: 4, M: 2}
	cfg.Classes = map[string]meta.Code{"ARCHIVE": {K: 2, M: 1}, "WIDE": {K: 6, M: 3}}
	cfg.Region = "us-east-1"
	cfg.Logger = testLogger(t)
	for _, f := range mutate {
		f(&cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := server.StartEmbedded(ctx, cfg)
	if err != nil {
		t.Fatalf("start server: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("close server: %v", err)
		}
	})
	c := &cluster{srv: srv, dir: dir}
	c.mc, c.core = newMinio(t, srv.S3Addr(), srv.Credentials().AccessKey, srv.Credentials().SecretKey)
	return c
}

func testLogger(t testing.TB) zerolog.Logger {
	if os.Getenv("TESSERA_TEST_LOG") != "" {
		return zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr}).Level(zerolog.DebugLevel).With().Timestamp().Logger()
	}
	return zerolog.New(io.Discard)
}

func newMinio(t testing.TB, addr, ak, sk string) (*minio.Client, *minio.Core) {
	t.Helper()
	opts := &minio.Options{Creds: credentials.NewStaticV4(ak, sk, ""), Secure: false, Region: "us-east-1"}
	mc, err := minio.New(addr, opts)
	if err != nil {
		t.Fatalf("minio client: %v", err)
	}
	core, err := minio.NewCore(addr, opts)
	if err != nil {
		t.Fatalf("minio core: %v", err)
	}
	return mc, core
}

// payload returns size deterministic pseudo-random bytes.
func payload(seed int64, size int) []byte {
	b := make([]byte, size)
	rand.New(rand.NewSource(seed)).Read(b)
	return b
}

// streamReader yields size deterministic bytes without holding them, for
// objects too big to keep in memory.
type streamReader struct {
	rnd  *rand.Rand
	left int64
}

func newStream(seed, size int64) *streamReader {
	return &streamReader{rnd: rand.New(rand.NewSource(seed)), left: size}
}

func (s *streamReader) Read(p []byte) (int, error) {
	if s.left == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > s.left {
		p = p[:s.left]
	}
	n, _ := s.rnd.Read(p)
	s.left -= int64(n)
	return n, nil
}

func streamSum(seed, size int64) [32]byte {
	h := sha256.New()
	_, _ = io.Copy(h, newStream(seed, size))
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

func mustPut(t testing.TB, c *cluster, bucket, key string, data []byte, opts minio.PutObjectOptions) minio.UploadInfo {
	t.Helper()
	info, err := c.mc.PutObject(context.Background(), bucket, key, bytes.NewReader(data), int64(len(data)), opts)
	if err != nil {
		t.Fatalf("put %s/%s (%d bytes): %v", bucket, key, len(data), err)
	}
	return info
}

func mustGet(t testing.TB, c *cluster, bucket, key string, opts minio.GetObjectOptions) []byte {
	t.Helper()
	obj, err := c.mc.GetObject(context.Background(), bucket, key, opts)
	if err != nil {
		t.Fatalf("get %s/%s: %v", bucket, key, err)
	}
	defer obj.Close()
	b, err := io.ReadAll(obj)
	if err != nil {
		t.Fatalf("read %s/%s: %v", bucket, key, err)
	}
	return b
}

func mustMakeBucket(t testing.TB, c *cluster, bucket string) {
	t.Helper()
	if err := c.mc.MakeBucket(context.Background(), bucket, minio.MakeBucketOptions{}); err != nil {
		t.Fatalf("make bucket %s: %v", bucket, err)
	}
}

func errCode(err error) string {
	return minio.ToErrorResponse(err).Code
}
