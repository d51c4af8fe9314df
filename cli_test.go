package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// flagLine is a flag's line in a command's help: its name, then its
// variable.
var flagLine = regexp.MustCompile(`(?m)^  --([a-z0-9-]+)\b.*$`)

// TestHelpExitsZero asks every command for its help both ways: it must
// print to stdout, exit 0, and list every flag with its variable.
func TestHelpExitsZero(t *testing.T) {
	roles := map[string]*flag.FlagSet{
		"server": newServerCmd().fs, "peer": newPeerCmd().fs, "gateway": newGatewayCmd().fs,
	}
	commands := [][]string{
		{"server"}, {"peer"}, {"gateway"}, {"admin"}, {"admin", "decommission"}, {"admin", "scrub"},
		{"admin", "status"}, {"admin", "layout"}, {"admin", "heal"}, {"admin", "info"},
		{"healthcheck"}, {"sim"}, {"bench"}, {"version"}, {},
	}
	for _, cmd := range commands {
		for _, h := range []string{"--help", "-h"} {
			name := strings.Join(append(append([]string{}, cmd...), h), " ")
			t.Run(name, func(t *testing.T) {
				var stdout, stderr bytes.Buffer
				err := run(append(append([]string{}, cmd...), h), &stdout, &stderr)
				if code := exitCode(err, io.Discard); code != 0 {
					t.Fatalf("exit code %d (%v), want 0; stderr %q", code, err, stderr.String())
				}
				out := stdout.String()
				if !strings.Contains(out, "Usage:") || !strings.Contains(out, strings.TrimSpace("tessera "+strings.Join(cmd, " "))) {
					t.Fatalf("help does not start with its usage:\n%s", out)
				}
				listed := checkFlagLines(t, out)
				if fs, ok := roles[strings.Join(cmd, " ")]; ok {
					if want := flagNames(fs); strings.Join(listed, " ") != strings.Join(want, " ") {
						t.Errorf("help lists flags %v, want %v", listed, want)
					}
				}
			})
		}
	}
}

// checkFlagLines returns the flags a help text lists, failing for any
// whose line does not name its variable.
func checkFlagLines(t *testing.T, out string) []string {
	t.Helper()
	var names []string
	for _, m := range flagLine.FindAllStringSubmatch(out, -1) {
		names = append(names, m[1])
		if !strings.Contains(m[0], envName(m[1])) {
			t.Errorf("flag line %q does not name %s", m[0], envName(m[1]))
		}
	}
	sort.Strings(names)
	return names
}

func flagNames(fs *flag.FlagSet) []string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	sort.Strings(names)
	return names
}

func TestExitCode(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want int
		says string
	}{
		{"success", nil, 0, ""},
		{"help", flag.ErrHelp, 0, ""},
		{"bad flag", &usageError{cmd: "tessera server", err: errors.New("flag provided but not defined: -x")}, 2, "tessera server --help"},
		{"usage printed", errUsagePrinted, 2, ""},
		{"unhealthy", &exitError{code: 1, msg: "healthcheck: 503"}, 1, "healthcheck: 503"},
		{"failure", errors.New("data directory in use"), 1, "tessera: data directory in use"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if got := exitCode(tc.err, &out); got != tc.want {
				t.Errorf("exit code %d, want %d", got, tc.want)
			}
			if tc.says == "" && out.Len() > 0 || !strings.Contains(out.String(), tc.says) {
				t.Errorf("printed %q, want %q", out.String(), tc.says)
			}
		})
	}
}

// TestUsageErrors: a command line a command cannot run exits 2 and
// points at the command's help.
func TestUsageErrors(t *testing.T) {
	cases := [][]string{
		{"server"},                 // no DIR
		{"server", "/d", "--nope"}, // unknown flag
		{"peer", "/a", "/b"},       // two DIRs
		{"server", "/d", "--log-format", "xml"},
		{"gateway", "stray"}, // positional
		{"sim", "--seeds=x"}, // bad value
		{"healthcheck", "--timeout=x"},
		{"healthcheck", "stray"},
		{"admin"}, {"admin", "frob"}, {"admin", "decommission"}, {"admin", "scrub", "stray"},
		{"admin", "status", "stray"}, {"admin", "layout", "frob"}, {"admin", "heal"}, {"admin", "info"}, {"frobnicate"}, {},
	}
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(args, &stdout, &stderr)
			if code := exitCode(err, &stderr); code != 2 {
				t.Fatalf("exit code %d (%v), want 2", code, err)
			}
			if !strings.Contains(stderr.String(), "--help") && !strings.Contains(stderr.String(), "Usage:") {
				t.Errorf("stderr %q points at no help", stderr.String())
			}
		})
	}
}
