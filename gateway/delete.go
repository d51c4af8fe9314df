package gateway

import (
	"bytes"
	"context"
	"encoding/xml"
	"net/http"
	"sync"

	"github.com/rs/zerolog"
	"github.com/rs/zerolog/hlog"

	"tessera/versioning"
)

const (
	// maxDeleteKeys is S3's limit on keys per DeleteObjects request.
	maxDeleteKeys = 1000
	// deleteParallelism bounds concurrent backend deletes of one request.
	deleteParallelism = 8
)

// deleteRequestXML is DeleteObjects' body.
type deleteRequestXML struct {
	XMLName xml.Name          `xml:"Delete"`
	Quiet   bool              `xml:"Quiet"`
	Objects []deleteObjectXML `xml:"Object"`
}

type deleteObjectXML struct {
	Key       string `xml:"Key"`
	VersionID string `xml:"VersionId"`
	// ETag makes the entry's delete conditional, as If-Match does.
	ETag string `xml:"ETag"`
}

// parseDeleteObjects parses and bounds a DeleteObjects body. Keys are
// validated one by one later, since a bad key fails only its own entry.
func parseDeleteObjects(body []byte) (deleteRequestXML, error) {
	var req deleteRequestXML
	if len(bytes.TrimSpace(body)) == 0 {
		return req, apiErr(errMalformedXML)
	}
	if err := xml.Unmarshal(body, &req); err != nil {
		return req, apiErr(errMalformedXML)
	}
	// An empty list deletes nothing and succeeds, as S3 answers it.
	if len(req.Objects) > maxDeleteKeys {
		return req, apiErr(errMalformedXML)
	}
	return req, nil
}

func (g *gateway) deleteObject(w http.ResponseWriter, r *http.Request) error {
	bucket, key, err := objectParams(r)
	if err != nil {
		return err
	}
	if err := checkVersionID(r.URL.Query()); err != nil {
		return err
	}
	cond, err := parseDeleteConditions(r.Header)
	if err != nil {
		return err
	}
	out, err := g.deleteVersion(r.Context(), bucket, key, r.URL.Query().Get("versionId"), cond, bypassGovernance(r.Header))
	if err != nil {
		return err
	}
	setVersionHeaders(w.Header(), out.versionID, out.marker)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (g *gateway) deleteObjects(w http.ResponseWriter, r *http.Request) error {
	bucket, err := bucketParam(r)
	if err != nil {
		return err
	}
	body, err := g.readBody(w, r)
	if err != nil {
		return err
	}
	req, err := parseDeleteObjects(body)
	if err != nil {
		return err
	}
	// A missing bucket fails the whole request, not each key.
	if _, err := g.be.HeadBucket(r.Context(), bucket); err != nil {
		return err
	}
	outs, errs := g.deleteAll(r.Context(), bucket, req.Objects, bypassGovernance(r.Header))
	return writeXML(w, http.StatusOK, renderDeleteResult(hlog.FromRequest(r), req, outs, errs))
}

// deleteAll deletes each object with bounded concurrency and returns what
// each delete did and the per-object errors, in request order. The plain
// deletes of an unversioned bucket (no version, no ETag condition) go to
// the backend as one batch, which costs each peer one write for all of
// them; the rest go one by one. All goroutines end before it returns.
func (g *gateway) deleteAll(ctx context.Context, bucket string, objs []deleteObjectXML, bypass bool) ([]deleteOutcome, []error) {
	outs := make([]deleteOutcome, len(objs))
	errs := make([]error, len(objs))
	st, stErr := g.versioningStatus(ctx, bucket)
	plain := stErr == nil && st == versioning.Unversioned
	var batch []int
	inBatch := map[string]bool{}
	sem := make(chan struct{}, deleteParallelism)
	var wg sync.WaitGroup
	for i, o := range objs {
		if err := checkKey(o.Key); err != nil {
			errs[i] = err
			continue
		}
		if o.VersionID != "" && !versionIDShaped(o.VersionID) {
			errs[i] = apiErr(errInvalidVersionID)
			continue
		}
		if plain && o.VersionID == "" && o.ETag == "" && !inBatch[o.Key] {
			inBatch[o.Key] = true
			batch = append(batch, i)
			continue
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			outs[i], errs[i] = g.deleteVersion(ctx, bucket, o.Key, o.VersionID, deleteConditions{ifMatch: o.ETag, size: -1}, bypass)
		}()
	}
	if len(batch) > 0 {
		keys := make([]string, len(batch))
		for n, i := range batch {
			keys[n] = objs[i].Key
		}
		for n, err := range g.be.DeleteObjects(ctx, bucket, keys, bypass) {
			errs[batch[n]] = err
		}
	}
	wg.Wait()
	return outs, errs
}

func renderDeleteResult(log *zerolog.Logger, req deleteRequestXML, outs []deleteOutcome, errs []error) deleteResult {
	var res deleteResult
	for i, o := range req.Objects {
		if err := errs[i]; err != nil {
			a, msg, _ := classify(err)
			if serverFault(a.Status) {
				log.Error().Err(err).Str("key", o.Key).Msg("delete failed")
			}
			res.Errors = append(res.Errors, deleteErrorXML{Key: o.Key, VersionID: o.VersionID, Code: a.Code, Message: msg})
			continue
		}
		if !req.Quiet {
			res.Deleted = append(res.Deleted, outs[i].deleted(o.Key, o.VersionID))
		}
	}
	return res
}
