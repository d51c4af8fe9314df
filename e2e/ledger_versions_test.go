package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	mathrand "math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

// TestFaultVersionedLedger is the ledger scenario on a versioned bucket:
// writers put and delete keys through two gateways while two of six peers
// and one gateway are killed with SIGKILL and later restarted. Every
// acknowledged version must afterwards be listed with its bytes, and
// every acknowledged delete marker listed as a marker; anything else
// listed must come from a write whose answer was lost.
//
//	TESSERA_E2E=full go test ./e2e -run TestFaultVersionedLedger -count=1 -v
func TestFaultVersionedLedger(t *testing.T) {
	needFull(t)
	if testing.Short() {
		t.Skip("starts eight tessera processes; run without -short")
	}
	spec := defaultSpec(t, 2)
	fr := bootFault(t, spec)
	ctx := context.Background()
	if err := fr.cores[0].EnableVersioning(ctx, fr.bucket); err != nil {
		t.Fatal(err)
	}
	vl := startVersionLoad(fr.bucket, fr.cores, spec.workers, spec.keysPer)
	time.Sleep(spec.before)
	victims := []*proc{fr.c.peers[1], fr.c.peers[4], fr.c.gws[1]}
	for _, p := range victims {
		fr.c.kill(p)
	}
	time.Sleep(spec.during)
	fr.c.start(victims[0])
	fr.c.start(victims[1])
	fr.restartGateway(victims[2])
	fr.c.waitAlive(6)
	time.Sleep(spec.after)
	vl.finish()
	acks, unknowns := vl.counts()
	t.Logf("%d versions and markers acknowledged, %d writes with no answer", acks, unknowns)
	if acks == 0 {
		t.Fatal("no write was acknowledged")
	}
	// A version the kills left on too few peers is settled by repair; the
	// check retries a read that fails with a 5xx until then.
	waitFor(t, 2*time.Minute, "every acknowledged version and marker where the ledger says", func() error {
		return vl.check(ctx, fr.cores[0])
	})
}

// versionOp is one write of a versioned key: a version with its bytes'
// hash, or a delete marker; its ID is known only when it was answered.
type versionOp struct {
	id     string
	sum    [32]byte
	marker bool
	o      outcome
}

type versionLoad struct {
	ld   *load // for its gateway failover
	mu   sync.Mutex
	ops  map[string][]versionOp
	stop chan struct{}
	wg   sync.WaitGroup
}

func startVersionLoad(bucket string, cores []*minio.Core, workers, keysPer int) *versionLoad {
	vl := &versionLoad{ld: &load{bucket: bucket, cores: cores}, ops: map[string][]versionOp{}, stop: make(chan struct{})}
	for w := range workers {
		vl.wg.Add(1)
		go vl.worker(w, keysPer)
	}
	return vl
}

func (vl *versionLoad) finish() {
	close(vl.stop)
	vl.wg.Wait()
}

func (vl *versionLoad) worker(w, keys int) {
	defer vl.wg.Done()
	rnd := mathrand.New(mathrand.NewPCG(uint64(w), 16))
	for i := 0; ; i++ {
		select {
		case <-vl.stop:
			return
		default:
		}
		key := fmt.Sprintf("w%d/k%03d", w, rnd.IntN(keys))
		gw := (w + i) % len(vl.ld.cores)
		if rnd.IntN(4) == 0 {
			vl.remove(gw, key)
			continue
		}
		vl.put(gw, key, payload(int64(w)<<32|int64(i), loadSizes[rnd.IntN(len(loadSizes))]))
	}
}

func (vl *versionLoad) put(gw int, key string, data []byte) {
	var id string
	err := vl.ld.call(gw, func(ctx context.Context, core *minio.Core) error {
		info, err := core.PutObject(ctx, vl.ld.bucket, key, bytes.NewReader(data), int64(len(data)), "", "", minio.PutObjectOptions{})
		id = info.VersionID
		return err
	})
	vl.record(key, versionOp{id: id, sum: sha256.Sum256(data), o: classify(err)})
}

func (vl *versionLoad) remove(gw int, key string) {
	var id string
	err := vl.ld.call(gw, func(ctx context.Context, core *minio.Core) error {
		objs := make(chan minio.ObjectInfo, 1)
		objs <- minio.ObjectInfo{Key: key}
		close(objs)
		for r := range core.RemoveObjectsWithResult(ctx, vl.ld.bucket, objs, minio.RemoveObjectsOptions{}) {
			if r.Err != nil {
				return r.Err
			}
			id = r.DeleteMarkerVersionID
		}
		return nil
	})
	vl.record(key, versionOp{id: id, marker: true, o: classify(err)})
}

func (vl *versionLoad) record(key string, op versionOp) {
	if op.o == acked && op.id == "" {
		op.o = unknown // answered without naming the version: count it as unknown, and fail below
	}
	vl.mu.Lock()
	vl.ops[key] = append(vl.ops[key], op)
	vl.mu.Unlock()
}

func (vl *versionLoad) counts() (acks, unknowns int) {
	for _, ops := range vl.ops {
		for _, op := range ops {
			switch op.o {
			case acked:
				acks++
			case unknown:
				unknowns++
			}
		}
	}
	return acks, unknowns
}

// check lists every key's versions and holds them to the ledger.
func (vl *versionLoad) check(ctx context.Context, core *minio.Core) error {
	listed := map[string]map[string]minio.ObjectInfo{}
	for o := range core.Client.ListObjects(ctx, vl.ld.bucket, minio.ListObjectsOptions{Recursive: true, WithVersions: true}) {
		if o.Err != nil {
			return fmt.Errorf("listing versions: %w", o.Err)
		}
		if listed[o.Key] == nil {
			listed[o.Key] = map[string]minio.ObjectInfo{}
		}
		listed[o.Key][o.VersionID] = o
	}
	for key, ops := range vl.ops {
		sums := map[[32]byte]bool{}
		lostDelete := false
		for _, op := range ops {
			switch {
			case op.o == acked && op.marker:
				if v, ok := listed[key][op.id]; !ok || !v.IsDeleteMarker {
					return fmt.Errorf("%s: acknowledged delete marker %s not listed as one", key, op.id)
				}
			case op.o == acked:
				if err := vl.readVersion(ctx, core, key, op.id, op.sum); err != nil {
					return err
				}
			case op.o == unknown && op.marker:
				lostDelete = true
			}
			if !op.marker && op.o != refused {
				sums[op.sum] = true
			}
		}
		for id, v := range listed[key] {
			if v.IsDeleteMarker && !lostDelete && !vl.ackedID(ops, id) {
				return fmt.Errorf("%s: delete marker %s that no write made", key, id)
			}
			if !v.IsDeleteMarker && !vl.ackedID(ops, id) {
				if err := vl.readKnown(ctx, core, key, id, sums); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (vl *versionLoad) ackedID(ops []versionOp, id string) bool {
	for _, op := range ops {
		if op.o == acked && op.id == id {
			return true
		}
	}
	return false
}

// readVersion reads key's version id and compares its bytes with sum.
func (vl *versionLoad) readVersion(ctx context.Context, core *minio.Core, key, id string, sum [32]byte) error {
	b, err := vl.get(ctx, core, key, id)
	if err != nil {
		return fmt.Errorf("%s@%s, acknowledged: %w", key, id, err)
	}
	if sha256.Sum256(b) != sum {
		return fmt.Errorf("%s@%s: other bytes than acknowledged (%d bytes)", key, id, len(b))
	}
	return nil
}

// readKnown reads a listed version no acknowledged write named: its bytes
// must be ones some write of the key sent.
func (vl *versionLoad) readKnown(ctx context.Context, core *minio.Core, key, id string, sums map[[32]byte]bool) error {
	b, err := vl.get(ctx, core, key, id)
	if err != nil {
		return fmt.Errorf("%s@%s, listed: %w", key, id, err)
	}
	if !sums[sha256.Sum256(b)] {
		return fmt.Errorf("%s@%s: bytes no write of the key sent (%d bytes)", key, id, len(b))
	}
	return nil
}

func (vl *versionLoad) get(ctx context.Context, core *minio.Core, key, id string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	r, _, _, err := core.GetObject(ctx, vl.ld.bucket, key, minio.GetObjectOptions{VersionID: id})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}
