package deploy

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// units are the unit files under systemd/ with the instance systemd-analyze
// checks a template as, and the data directory each writes (none for the
// gateway).
var units = []struct {
	file, name, role, dir string
}{
	{"tessera-peer@.service", "tessera-peer@disk1.service", "peer", "/var/lib/tessera/%i"},
	{"tessera-gateway.service", "tessera-gateway.service", "gateway", ""},
	{"tessera-server.service", "tessera-server.service", "server", "/var/lib/tessera/server"},
}

// unitRoot lays out a root for systemd-analyze --root: the system's own
// units (the targets the tessera units order against), the tessera units
// and, where ExecStart names it, the real binary.
func unitRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	sys := filepath.Join(root, "usr/lib/systemd")
	if err := os.MkdirAll(sys, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, ".", "cp", "-a", "/usr/lib/systemd/system", sys); err != nil {
		t.Fatalf("copy the system's units: %v\n%s", err, out)
	}
	etc := filepath.Join(root, "etc/systemd/system")
	bin := filepath.Join(root, "usr/local/bin")
	for _, d := range []string{etc, bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, u := range units {
		if err := os.WriteFile(filepath.Join(etc, u.file), readFile(t, "systemd/"+u.file), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(bin, "tessera"), readFile(t, tesseraBin(t)), 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestSystemdVerify runs systemd-analyze verify on every unit (it needs no
// running systemd) and holds each unit's sandbox to an exposure of at most
// 2.0 in systemd-analyze security, systemd's "OK" band.
func TestSystemdVerify(t *testing.T) {
	analyze := need(t, "systemd-analyze", "apt-get install systemd")
	if _, err := os.Stat("/usr/lib/systemd/system/sysinit.target"); err != nil {
		t.Fatalf("systemd-analyze without the system's units: %v (Debian package systemd)", err)
	}
	root := unitRoot(t)
	for _, u := range units {
		// verify exits 0 on warnings (unknown keys, bad values), so any
		// output fails.
		out, err := run(t, ".", analyze, "verify", "--root="+root, u.name)
		if err != nil || len(bytes.TrimSpace(out)) > 0 {
			t.Errorf("systemd-analyze verify %s: %v\n%s", u.name, err, out)
		}
		out, err = run(t, ".", analyze, "security", "--offline=yes", "--threshold=20", "--no-pager", "--root="+root, u.name)
		if err != nil {
			t.Errorf("systemd-analyze security %s: exposure above 2.0 (%v):\n%s", u.name, err, out)
		}
	}
}

// unitKeys reads a unit file's [Service] keys; repeated keys keep every
// value.
func unitKeys(t *testing.T, file string) map[string][]string {
	t.Helper()
	keys := map[string][]string{}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(readFile(t, file)))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			section = line
		case section == "[Service]":
			k, v, _ := strings.Cut(line, "=")
			keys[k] = append(keys[k], v)
		}
	}
	return keys
}

// TestSystemdUnits checks what verify does not: each unit runs the role it
// names with flags that role has, as the tessera user, inside the sandbox
// the README promises, writing only its data directory, with its secrets
// from an EnvironmentFile.
func TestSystemdUnits(t *testing.T) {
	sandbox := map[string]string{"ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes",
		"NoNewPrivileges": "yes", "CapabilityBoundingSet": "", "AmbientCapabilities": "", "PrivateDevices": "yes",
		"User": "tessera", "Group": "tessera", "RestrictSUIDSGID": "yes", "MemoryDenyWriteExecute": "yes"}
	for _, u := range units {
		keys := unitKeys(t, "systemd/"+u.file)
		for k, want := range sandbox {
			if v := keys[k]; len(v) != 1 || v[0] != want {
				t.Errorf("%s: %s=%q, want %s=%s", u.file, k, v, k, want)
			}
		}
		exec := strings.Fields(strings.Join(keys["ExecStart"], ""))
		if len(exec) < 2 || exec[0] != "/usr/local/bin/tessera" || exec[1] != u.role {
			t.Fatalf("%s: ExecStart %q, want /usr/local/bin/tessera %s ...", u.file, exec, u.role)
		}
		flags := commandFlags(t, u.role)
		for _, a := range exec[2:] {
			if n := flagName(a); n != "" && !flags[n] {
				t.Errorf("%s: ExecStart passes --%s, which tessera %s does not have", u.file, n, u.role)
			}
		}
		if u.dir != "" {
			if !strings.Contains(strings.Join(exec, " "), " "+u.dir) {
				t.Errorf("%s: ExecStart %q does not use the data directory %s", u.file, exec, u.dir)
			}
			if rw := keys["ReadWritePaths"]; len(rw) != 1 || rw[0] != u.dir {
				t.Errorf("%s: ReadWritePaths=%q, want exactly the data directory %s", u.file, rw, u.dir)
			}
		} else if rw := keys["ReadWritePaths"]; len(rw) > 0 {
			t.Errorf("%s: ReadWritePaths=%q, but the gateway writes nothing", u.file, rw)
		}
		if len(keys["EnvironmentFile"]) == 0 {
			t.Errorf("%s: no EnvironmentFile for the secrets and flags", u.file)
		}
	}
}

// TestSystemdEnvFiles: every variable the example environment files set is
// a flag of the role that reads it (TESSERA_<FLAG>) or one of the secrets.
func TestSystemdEnvFiles(t *testing.T) {
	secrets := map[string]bool{"TESSERA_CLUSTER_SECRET": true, "TESSERA_ACCESS_KEY": true, "TESSERA_SECRET_KEY": true}
	for file, role := range map[string]string{"peer.env.example": "peer", "gateway.env.example": "gateway", "tessera.env.example": ""} {
		var flags map[string]bool
		if role != "" {
			flags = commandFlags(t, role)
		}
		n := 0
		for _, line := range strings.Split(string(readFile(t, "systemd/"+file)), "\n") {
			name, _, ok := strings.Cut(strings.TrimSpace(line), "=")
			if !ok || strings.HasPrefix(name, "#") {
				continue
			}
			n++
			flag := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(name, "TESSERA_"), "_", "-"))
			switch {
			case role == "" && secrets[name]:
			case role != "" && !secrets[name] && flags[flag]:
			default:
				t.Errorf("%s sets %s: neither a flag of tessera %s nor a secret that file holds", file, name, role)
			}
		}
		if n == 0 {
			t.Errorf("%s sets nothing", file)
		}
	}
}

// TestSystemdSysusers creates the tessera user from tessera.sysusers in an
// empty root.
func TestSystemdSysusers(t *testing.T) {
	sysusers := need(t, "systemd-sysusers", "apt-get install systemd")
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs("systemd/tessera.sysusers")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, ".", sysusers, "--root="+root, abs); err != nil {
		t.Fatalf("systemd-sysusers: %v\n%s", err, out)
	}
	passwd := string(readFile(t, filepath.Join(root, "etc/passwd")))
	if !strings.Contains(passwd, "tessera:x:") || !strings.Contains(passwd, ":/var/lib/tessera:") {
		t.Errorf("no tessera user with home /var/lib/tessera in:\n%s", passwd)
	}
}
