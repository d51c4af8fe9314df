package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// poll calls check every interval until it reports done or ctx ends. A
// failing check is retried (a gateway restarting, a peer slow to answer):
// its last error is reported with ctx's.
func poll(ctx context.Context, every time.Duration, check func() (bool, error)) error {
	for {
		done, err := check()
		if done && err == nil {
			return nil
		}
		t := time.NewTimer(every)
		select {
		case <-ctx.Done():
			t.Stop()
			if err != nil {
				return fmt.Errorf("%w (last poll: %v)", ctx.Err(), err)
			}
			return ctx.Err()
		case <-t.C:
		}
	}
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printJSONIf prints v as JSON when asked to.
func printJSONIf(asJSON bool, w io.Writer, v any) error {
	if !asJSON {
		return nil
	}
	return printJSON(w, v)
}
