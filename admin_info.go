package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"tessera/gateway"
)

func runAdminInfo(ctx context.Context, args []string, stdout io.Writer) error {
	cmd := newAdminCommand("info", "info BUCKET [flags]",
		"Shows what a bucket holds, counted by a full listing made now: objects and\n"+
			"bytes, per storage class with its code, multipart uploads in progress,\n"+
			"and the configuration it has (versioning, object lock, CORS).")
	pos, err := cmd.parse(args, stdout)
	if err != nil {
		return err
	}
	if err := cmd.args(pos, 1, 1, "one BUCKET"); err != nil {
		return err
	}
	return show(ctx, cmd, stdout, http.MethodGet, "bucket", url.Values{"name": {pos[0]}}, renderInfo)
}

func renderInfo(w io.Writer, rep gateway.BucketReport) {
	fmt.Fprintf(w, "Bucket %s, created %s\n", rep.Name, rep.Created.UTC().Format("2006-01-02 15:04:05 UTC"))
	fmt.Fprintf(w, "Objects:    %d (%s); multipart uploads in progress: %d\n", rep.Objects, humanBytes(rep.Bytes), rep.Uploads)
	if len(rep.Classes) > 0 {
		fmt.Fprintln(w)
		tw := newTable(w)
		row(tw, "  CLASS", "CODE", "OBJECTS", "BYTES")
		for _, c := range rep.Classes {
			row(tw, "  "+c.Class, orDash(c.Code), strconv.FormatInt(c.Objects, 10), humanBytes(c.Bytes))
		}
		tw.Flush()
		fmt.Fprintln(w)
	}
	lock := "none"
	if rep.ObjectLock {
		lock = "enabled"
	}
	fmt.Fprintf(w, "Versioning: %s; object lock: %s\n", rep.Versioning, lock)
	if rep.CORSRules == 0 && rep.CORS == "" {
		fmt.Fprintln(w, "CORS:       none")
		return
	}
	fmt.Fprintf(w, "CORS:       %s\n%s\n", plural(rep.CORSRules, "rule"), rep.CORS)
}
