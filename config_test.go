package main

import (
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// sampleValues holds, for every flag of server, peer and gateway, a value
// unlike its default, as typed on the command line; a list is a flag
// given several times. A flag added without a sample here fails
// TestConfigEveryKey.
var sampleValues = map[string][]string{
	"access-log": {"true"}, "address": {"127.0.0.2:19000"}, "web-address": {"127.0.0.2:19001"},
	"web-public": {"true"}, "metrics-token": {"tok-123"}, "peers": {"7"}, "ec": {"3+2"},
	"storage-class": {"COLD=2+1", "WIDE=5+2"}, "block-size": {"65536"}, "sched": {"greedy"},
	"fetch-pool": {"33"}, "get-memory": {"1048576"}, "tls-cert": {"/etc/tessera/cert.pem"},
	"tls-key": {"/etc/tessera/key.pem"}, "domain": {"s3.example.test", "s3.other.test"},
	"scrub-interval": {"12h"}, "scrub-rate": {"8MiB"}, "scrub-objects-rate": {"75.5"},
	"log-level": {"debug"}, "log-format": {"json"}, "bind": {"127.0.0.2:17946"},
	"advertise-address": {"peer1.internal:9100"}, "join": {"a.test:7946", "b.test:7946"},
	"capacity": {"10GiB"}, "zone": {"rack-2"}, "ring-width": {"6"}, "gossip-timing": {"fast"},
	"max-send-rate": {"125000000"}, "chunk-delay": {"2ms"}, "scan-interval": {"5m"},
	"scan-rate": {"12.5"}, "repair-workers": {"4"}, "tombstone-grace": {"48h"}, "collect-rate": {"75"},
	"index-cache": {"16MiB"}, "peer-address": {"127.0.0.2:19100"},
}

// role parses one role's command line into the configuration it runs.
type role struct {
	name  string
	pos   []string // positional arguments
	flags func() *flag.FlagSet
	parse func(args []string) (any, error)
}

var roles = []role{
	{"server", []string{"/data"}, func() *flag.FlagSet { return newServerCmd().fs }, func(args []string) (any, error) {
		c := newServerCmd()
		err := c.parse(args, io.Discard)
		return []any{c.cfg, c.log}, err
	}},
	{"peer", []string{"/data"}, func() *flag.FlagSet { return newPeerCmd().fs }, func(args []string) (any, error) {
		c := newPeerCmd()
		err := c.parse(args, io.Discard)
		return []any{c.cfg, c.log}, err
	}},
	{"gateway", nil, func() *flag.FlagSet { return newGatewayCmd().fs }, func(args []string) (any, error) {
		c := newGatewayCmd()
		err := c.parse(args, io.Discard)
		return []any{c.cfg, c.log}, err
	}},
}

// TestConfigEveryKey loads, for each role and format, a file holding
// every flag as a key, and wants the configuration the same flags give on
// the command line; each sample alone must also change the configuration,
// so a flag that reaches nothing is caught too.
func TestConfigEveryKey(t *testing.T) {
	for _, r := range roles {
		for _, format := range []string{"toml", "yaml"} {
			t.Run(r.name+"/"+format, func(t *testing.T) {
				fs := r.flags()
				clearFlagEnv(t, fs)
				var args []string
				file := map[string][]string{}
				fs.VisitAll(func(f *flag.Flag) {
					if f.Name == "config" {
						return
					}
					vals, ok := sampleValues[f.Name]
					if !ok {
						t.Fatalf("flag --%s has no sample value in sampleValues", f.Name)
					}
					for _, v := range vals {
						args = append(args, "--"+f.Name+"="+v)
					}
					file[f.Name] = vals
				})
				path := writeConfig(t, format, fs, file)
				fromFlags := mustParse(t, r, append(args, r.pos...))
				fromFile := mustParse(t, r, append([]string{"--config", path}, r.pos...))
				if !reflect.DeepEqual(fromFile, fromFlags) {
					t.Fatalf("config file gives\n%+v\nflags give\n%+v", fromFile, fromFlags)
				}
				defaults := mustParse(t, r, r.pos)
				for name, vals := range file {
					var one []string
					for _, v := range vals {
						one = append(one, "--"+name+"="+v)
					}
					if reflect.DeepEqual(mustParse(t, r, append(one, r.pos...)), defaults) {
						t.Errorf("--%s %v leaves the configuration at its defaults", name, vals)
					}
				}
			})
		}
	}
}

func mustParse(t *testing.T, r role, args []string) any {
	t.Helper()
	got, err := r.parse(args)
	if err != nil {
		t.Fatalf("tessera %s %v: %v", r.name, args, err)
	}
	return got
}

// clearFlagEnv unsets the variables of fs's flags for the test, so the
// environment it runs in cannot stand in for a missing key.
func clearFlagEnv(t *testing.T, fs *flag.FlagSet) {
	t.Helper()
	fs.VisitAll(func(f *flag.Flag) {
		if _, ok := os.LookupEnv(envName(f.Name)); ok {
			t.Setenv(envName(f.Name), "")
			os.Unsetenv(envName(f.Name))
		}
	})
}

// writeConfig writes values as a TOML or YAML file, typed as a person
// would write them: booleans and numbers bare, strings quoted, repeated
// flags as lists.
func writeConfig(t *testing.T, format string, fs *flag.FlagSet, values map[string][]string) string {
	t.Helper()
	names := make([]string, 0, len(values))
	for n := range values {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		f := fs.Lookup(n)
		var items []string
		for _, v := range values[n] {
			items = append(items, literal(f, v))
		}
		v := items[0]
		if _, ok := f.Value.(repeatable); ok {
			v = "[" + strings.Join(items, ", ") + "]"
		}
		sep := " = "
		if format == "yaml" {
			sep = ": "
		}
		b.WriteString(n + sep + v + "\n")
	}
	path := filepath.Join(t.TempDir(), "tessera."+format)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// literal is v as a TOML or YAML value of the flag's kind (a JSON string
// is both a TOML and a YAML string for these values).
func literal(f *flag.Flag, v string) string {
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return v
	}
	if g, ok := f.Value.(flag.Getter); ok {
		switch g.Get().(type) {
		case int, int64, uint, uint64, float64:
			if _, err := strconv.ParseFloat(v, 64); err == nil {
				return v
			}
		}
	}
	q, _ := json.Marshal(v)
	return string(q)
}

// TestConfigPrecedence: a flag beats its variable, which beats the file,
// which beats the default.
func TestConfigPrecedence(t *testing.T) {
	cases := []struct {
		name       string
		flag, env  string
		file, want string
	}{
		{"default", "", "", "", ":9000"},
		{"file", "", "", "127.0.0.1:1", "127.0.0.1:1"},
		{"env beats file", "", "127.0.0.1:2", "127.0.0.1:1", "127.0.0.1:2"},
		{"flag beats env and file", "127.0.0.1:3", "127.0.0.1:2", "127.0.0.1:1", "127.0.0.1:3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newServerCmd()
			clearFlagEnv(t, c.fs)
			args := []string{"/data"}
			if tc.file != "" {
				path := filepath.Join(t.TempDir(), "c.yaml")
				if err := os.WriteFile(path, []byte("address: "+strconv.Quote(tc.file)+"\npeers: 3\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--config", path)
			}
			if tc.env != "" {
				t.Setenv("TESSERA_ADDRESS", tc.env)
			}
			if tc.flag != "" {
				args = append(args, "--address", tc.flag)
			}
			if err := c.parse(args, io.Discard); err != nil {
				t.Fatal(err)
			}
			if c.cfg.Address != tc.want {
				t.Errorf("address %q, want %q", c.cfg.Address, tc.want)
			}
			if tc.file != "" && c.cfg.Peers != 3 {
				t.Errorf("peers %d: the file's other key was lost", c.cfg.Peers)
			}
		})
	}
}

// TestConfigErrors: what a file cannot say is refused with a message
// naming the key or the file.
func TestConfigErrors(t *testing.T) {
	cases := []struct {
		name, file, body string
		says             []string
	}{
		{"unknown keys", "c.toml", "adress = \":1\"\npeers = 3\nlog_level = \"debug\"\n", []string{"unknown keys adress, log_level"}},
		{"config in config", "c.yaml", "config: other.yaml\n", []string{"unknown keys config"}},
		{"list for one value", "c.yaml", "address: [\":1\", \":2\"]\n", []string{"address", "takes one value"}},
		{"table", "c.toml", "[scrub]\nrate = 1\n", []string{"scrub"}},
		{"bad value", "c.toml", "peers = \"many\"\n", []string{"peers"}},
		{"bad duration", "c.yaml", "scrub-interval: 600\n", []string{"scrub-interval", `invalid value "600"`}},
		{"bad syntax", "c.toml", "peers = = 3\n", []string{"c.toml"}},
		{"other extension", "c.json", "{}", []string{".toml, .yaml or .yml"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tc.file)
			if err := os.WriteFile(path, []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			c := newServerCmd()
			clearFlagEnv(t, c.fs)
			err := c.parse([]string{"/data", "--config", path}, io.Discard)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, s := range tc.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
		})
	}
}

// TestConfigMissingFile names the file that is not there.
func TestConfigMissingFile(t *testing.T) {
	c := newPeerCmd()
	err := c.parse([]string{"/data", "--config", "/nonexistent/tessera.toml"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/tessera.toml") {
		t.Fatalf("error %v, want one naming the file", err)
	}
}
