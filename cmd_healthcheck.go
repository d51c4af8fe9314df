package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

const healthcheckAbout = `Exits 0 when the URL answers 200 within --timeout, 1 otherwise: a health
check for images that have no curl (Docker's HEALTHCHECK).`

// runHealthcheck probes one health endpoint.
func runHealthcheck(ctx context.Context, args []string, stdout io.Writer) error {
	c := newCommand("healthcheck", "healthcheck [--url URL] [--timeout DUR]", healthcheckAbout)
	url := c.fs.String("url", "http://127.0.0.1:9001/health/ready", "the endpoint to probe")
	timeout := c.fs.Duration("timeout", 3*time.Second, "how long to wait for the answer")
	pos, err := c.parse(args, stdout)
	if err != nil {
		return err
	}
	if err := c.noArgs(pos); err != nil {
		return err
	}
	if err := probe(ctx, *url, *timeout); err != nil {
		return &exitError{code: 1, msg: "healthcheck: " + err.Error()}
	}
	return nil
}

// probe GETs url and wants 200.
func probe(ctx context.Context, url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("%s: %s: %s", url, resp.Status, trimLine(body))
	}
	return nil
}

// trimLine is the first line of an answer's body, for the error message.
func trimLine(b []byte) string {
	for i, c := range b {
		if c == '\n' {
			return string(b[:i])
		}
	}
	return string(b)
}
