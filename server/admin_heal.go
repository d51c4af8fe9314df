package server

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"tessera/gateway"
	"tessera/object"
)

// Heal jobs (gateway.HealAdmin): repair every object under a prefix now,
// rather than when the background scanner next reaches it, and count
// what that took. A job runs in the gateway that was asked, at most
// Repair.Workers objects at once (2 at least), and its status stays
// there, in memory, for the last maxHealJobs jobs.

const (
	maxHealJobs = 16
	// healErrors is how many failures a job's status lists.
	healErrors = 10
	// healObjectTimeout bounds one object's repair, as the queue's does.
	healObjectTimeout = 2 * time.Minute
	// maxShards is the most shards a code can have (meta.Code.Valid):
	// a full heal names them all suspect, so every shard an object has,
	// whatever its code, is verified.
	maxShards = 256
)

// healJobs holds a gateway's heal jobs and the context they run under,
// cancelled by close.
type healJobs struct {
	mu     sync.Mutex
	next   int
	jobs   map[string]*healJob
	order  []string // job IDs, oldest first
	ctx    context.Context
	cancel context.CancelFunc
	closed bool
	wg     sync.WaitGroup
}

type healJob struct {
	mu sync.Mutex
	st gateway.HealStatus
}

// StartHeal checks the bucket and starts repairing what lies under the
// prefix in the background.
func (g *Gateway) StartHeal(ctx context.Context, req gateway.HealRequest) (gateway.HealStatus, error) {
	if _, err := g.layer.HeadBucket(ctx, req.Bucket); err != nil {
		return gateway.HealStatus{}, err
	}
	job, jctx, err := g.heals.add(req)
	if err != nil {
		return gateway.HealStatus{}, err
	}
	g.log.Info().Str("bucket", req.Bucket).Str("prefix", req.Prefix).Bool("quick", req.Quick).Str("job", job.st.ID).
		Msg("heal started")
	go func() {
		defer g.heals.wg.Done()
		g.runHeal(jctx, job)
	}()
	return job.status(), nil
}

// HealStatus reports a job this gateway started.
func (g *Gateway) HealStatus(id string) (gateway.HealStatus, error) {
	g.heals.mu.Lock()
	job, ok := g.heals.jobs[id]
	g.heals.mu.Unlock()
	if !ok {
		return gateway.HealStatus{}, fmt.Errorf("%w: gateway %s has no heal job %q (a job's status lives in the gateway "+
			"that started it, until it restarts)", gateway.ErrAdminRequest, g.id, id)
	}
	return job.status(), nil
}

// add registers a job, dropping the oldest finished ones beyond
// maxHealJobs, and counts it in wg under the lock close takes, so close
// never waits while a job is being added.
func (h *healJobs) add(req gateway.HealRequest) (*healJob, context.Context, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, nil, fmt.Errorf("%w: the gateway is shutting down", gateway.ErrAdminRequest)
	}
	if h.ctx == nil {
		h.ctx, h.cancel = context.WithCancel(context.Background())
		h.jobs = map[string]*healJob{}
	}
	h.next++
	h.wg.Add(1)
	job := &healJob{st: gateway.HealStatus{ID: strconv.Itoa(h.next), HealRequest: req, Started: time.Now().UTC(), Errors: []string{}}}
	h.jobs[job.st.ID] = job
	h.order = append(h.order, job.st.ID)
	for len(h.order) > maxHealJobs {
		old := h.jobs[h.order[0]]
		if old.status().Finished == nil {
			break // running: kept
		}
		delete(h.jobs, h.order[0])
		h.order = h.order[1:]
	}
	return job, h.ctx, nil
}

// close stops every job and waits for them.
func (h *healJobs) close() {
	h.mu.Lock()
	h.closed = true
	cancel := h.cancel
	h.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	h.wg.Wait()
}

// runHeal lists the prefix page by page and repairs each object.
func (g *Gateway) runHeal(ctx context.Context, job *healJob) {
	req := job.status().HealRequest
	slots := make(chan struct{}, max(2, g.cfg.Repair.Workers))
	var wg sync.WaitGroup
	opts := object.ListOptions{Prefix: req.Prefix, MaxKeys: object.DefaultMaxKeys}
	var err error
	for {
		var page object.ListResult
		if page, err = g.layer.ListObjects(ctx, req.Bucket, opts); err != nil {
			break
		}
		for _, o := range page.Objects {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
			}
			if ctx.Err() != nil {
				break
			}
			wg.Go(func() {
				defer func() { <-slots }()
				shards, err := g.healObject(ctx, req, o.Key)
				job.record(o.Key, shards, err)
			})
		}
		if err = ctx.Err(); err != nil || !page.IsTruncated || page.NextAfter == "" {
			break
		}
		opts.After = page.NextAfter
	}
	wg.Wait()
	st := job.finish(err)
	g.log.Info().Str("job", st.ID).Str("bucket", st.Bucket).Str("prefix", st.Prefix).Int64("objects", st.Objects).
		Int64("repaired", st.Repaired).Int64("shards", st.Shards).Int64("failed", st.Failed).Msg("heal finished")
}

// healObject repairs one object and returns how many shards it rewrote.
// The first call surveys the peers' records; unless quick, a second one
// names every shard of the version found suspect, so each is read and
// verified, and rebuilt if its bytes are missing or damaged.
func (g *Gateway) healObject(ctx context.Context, req gateway.HealRequest, key string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, healObjectTimeout)
	defer cancel()
	res, err := g.layer.RepairObject(ctx, req.Bucket, key, object.RepairOptions{})
	shards := len(res.Repaired)
	if err != nil || req.Quick || res.Stamp.IsZero() {
		return shards, err
	}
	all := make([]int, maxShards)
	for i := range all {
		all[i] = i
	}
	res, err = g.layer.RepairObject(ctx, req.Bucket, key, object.RepairOptions{Stamp: res.Stamp, Suspect: all})
	return shards + len(res.Repaired), err
}

func (j *healJob) status() gateway.HealStatus {
	j.mu.Lock()
	defer j.mu.Unlock()
	st := j.st
	st.Errors = append([]string{}, j.st.Errors...)
	return st
}

func (j *healJob) record(key string, shards int, err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.st.Objects++
	switch {
	case err != nil:
		j.st.Failed++
		if len(j.st.Errors) < healErrors {
			j.st.Errors = append(j.st.Errors, key+": "+err.Error())
		}
	case shards > 0:
		j.st.Repaired++
		j.st.Shards += int64(shards)
	default:
		j.st.Healthy++
	}
}

func (j *healJob) finish(err error) gateway.HealStatus {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err != nil {
		j.st.Error = err.Error()
	}
	now := time.Now().UTC()
	j.st.Finished = &now
	return j.st
}
