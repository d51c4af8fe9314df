package gateway

import (
	"errors"
	"net/http"

	"tessera/lifecycle"
)

// Bucket lifecycle: the rules are checked as S3 checks them
// (lifecycle.Parse) and stored, in the form GET returns, as the bucket
// configuration lifecycle.ConfigName; the gateways' lifecycle workers
// read them from there.

func (g *gateway) putBucketLifecycle(w http.ResponseWriter, r *http.Request) error {
	_, err := g.storeBucketConfig(w, r, lifecycle.ConfigName, func(b []byte) (any, error) {
		cfg, err := lifecycle.Parse(b)
		if err != nil {
			return nil, lifecycleErr(err)
		}
		return cfg, nil
	})
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (g *gateway) getBucketLifecycle(w http.ResponseWriter, r *http.Request) error {
	data, err := g.readBucketConfig(r, lifecycle.ConfigName, errNoSuchLifecycleConfiguration)
	if err != nil {
		return err
	}
	cfg, err := lifecycle.Parse(data)
	if err != nil {
		return err
	}
	return writeXML(w, http.StatusOK, cfg)
}

func (g *gateway) deleteBucketLifecycle(w http.ResponseWriter, r *http.Request) error {
	if _, err := g.clearBucketConfig(r, lifecycle.ConfigName); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// lifecycleErr is a refused configuration in S3's words.
func lifecycleErr(err error) error {
	var e *lifecycle.Error
	if !errors.As(err, &e) {
		return err
	}
	return refusal(e.Code, e.Message)
}
