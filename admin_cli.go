package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
)

// adminCommand is an admin subcommand that calls a gateway's admin API:
// a command (its flags, TESSERA_<FLAG> variables and --help) with the
// flags every such call takes.
type adminCommand struct {
	*command
	endpoint, caFile *string
	asJSON           *bool
}

// newAdminCommand names the subcommand as typed after "tessera admin".
func newAdminCommand(name, synopsis, about string) *adminCommand {
	c := &adminCommand{command: newCommand("admin "+name, "admin "+synopsis, about)}
	c.endpoint = c.fs.String("endpoint", "127.0.0.1:9000",
		"a gateway's S3 endpoint, `HOST:PORT` or URL (https is used when the gateway serves TLS)")
	c.caFile = c.fs.String("ca-file", "", "PEM `FILE` of the CA that signed the gateway's certificate, when the system's do not")
	c.asJSON = c.fs.Bool("json", false, "print the answer as JSON instead of a table")
	c.env = []string{"TESSERA_ACCESS_KEY, TESSERA_SECRET_KEY   the S3 keys (required)",
		"TESSERA_REGION   the S3 region (default us-east-1)"}
	return c
}

// client is the admin API client the flags name.
func (c *adminCommand) client() (*adminClient, error) { return newAdminClient(*c.endpoint, *c.caFile) }

// args checks the count of positional arguments.
func (c *adminCommand) args(pos []string, min, max int, what string) error {
	if len(pos) < min || len(pos) > max {
		return c.usage(fmt.Errorf("want %s, got %d arguments", what, len(pos)))
	}
	return nil
}

// usage is a command line the subcommand cannot run.
func (c *adminCommand) usage(err error) error { return &usageError{cmd: "tessera " + c.name, err: err} }

// given reports whether flag name was set, on the command line or by its
// variable.
func (c *adminCommand) given(name string) bool {
	set := false
	c.fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	_, inEnv := os.LookupEnv(envName(name))
	return set || inEnv
}

// show makes one admin API call and prints its answer: as JSON with
// --json, else as render draws it. status, layout and info are this.
func show[T any](ctx context.Context, cmd *adminCommand, stdout io.Writer, method, path string, q url.Values, render func(io.Writer, T)) error {
	c, err := cmd.client()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	var rep T
	if err := c.do(ctx, method, path, q, &rep); err != nil {
		return err
	}
	if *cmd.asJSON {
		return printJSON(stdout, rep)
	}
	render(stdout, rep)
	return nil
}
