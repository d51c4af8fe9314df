package deploy

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// releaseScript runs scripts/release.sh into a fresh directory.
func releaseScript(t *testing.T, env []string, args ...string) string {
	t.Helper()
	dist := t.TempDir()
	cmd := exec.Command("bash", append([]string{"scripts/release.sh"}, args...)...)
	cmd.Dir, cmd.Env = repoRoot(t), append(append(os.Environ(), "DIST="+dist), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/release.sh %v: %v\n%s", args, err, out)
	}
	return dist
}

// TestRelease builds both release binaries and checks their sums, that
// they are static executables for their architecture, carry the version
// and no path of the machine that built them.
func TestRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles tessera twice; run without -short")
	}
	sha256sum := need(t, "sha256sum", "apt-get install coreutils")
	const v = "9.9.9-rc.1"
	dist := releaseScript(t, nil, v)
	arches := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}
	var want []string
	for arch := range arches {
		want = append(want, "tessera-"+v+"-linux-"+arch)
	}
	sort.Strings(want)
	entries, err := os.ReadDir(dist)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if strings.Join(got, " ") != strings.Join(append(append([]string{}, "SHA256SUMS"), want...), " ") {
		t.Fatalf("dist holds %v, want SHA256SUMS and %v", got, want)
	}

	// The sums file is sha256sum's: "HEX  NAME" per binary, and checks.
	var sums []string
	for _, name := range want {
		sum := sha256.Sum256(readFile(t, filepath.Join(dist, name)))
		sums = append(sums, hex.EncodeToString(sum[:])+"  "+name)
	}
	if got := string(readFile(t, filepath.Join(dist, "SHA256SUMS"))); got != strings.Join(sums, "\n")+"\n" {
		t.Errorf("SHA256SUMS:\n%s\nwant:\n%s", got, strings.Join(sums, "\n"))
	}
	if out, err := run(t, dist, sha256sum, "--strict", "-c", "SHA256SUMS"); err != nil || bytes.Count(out, []byte(": OK\n")) != len(want) {
		t.Errorf("sha256sum -c: %v\n%s", err, out)
	}

	root := repoRoot(t)
	for arch, machine := range arches {
		path := filepath.Join(dist, "tessera-"+v+"-linux-"+arch)
		checkStatic(t, path, machine)
		b := readFile(t, path)
		if !bytes.Contains(b, []byte(v)) {
			t.Errorf("%s: version %s not stamped", arch, v)
		}
		if bytes.Contains(b, []byte(root)) {
			t.Errorf("%s: holds the build directory %s (no -trimpath?)", arch, root)
		}
		if arch == runtime.GOARCH {
			out, err := exec.Command(path, "version").CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != "tessera "+v {
				t.Errorf("%s version: %q %v, want \"tessera %s\"", arch, out, err, v)
			}
		}
	}
}

// checkStatic: an executable for machine with no interpreter and no shared
// libraries, so it runs in an empty image or on any distribution.
func checkStatic(t *testing.T, path string, machine elf.Machine) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Machine != machine || f.Type != elf.ET_EXEC {
		t.Errorf("%s: %v %v, want an %v executable", path, f.Type, f.Machine, machine)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("%s: has %v: dynamically linked", path, p.Type)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("%s: needs %v", path, libs)
	}
}

// TestReleaseDefaultVersion: without an argument the version is the tag on
// HEAD, else version.go's with the commit.
func TestReleaseDefaultVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds tessera; run without -short")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed: the default version comes from git")
	}
	root := repoRoot(t)
	want := version(t)
	if tag, err := run(t, root, "git", "describe", "--tags", "--exact-match"); err == nil {
		want = strings.TrimPrefix(strings.TrimSpace(string(tag)), "v")
	} else if commit, err := run(t, root, "git", "rev-parse", "--short", "HEAD"); err == nil {
		want += "+" + strings.TrimSpace(string(commit))
	}
	dist := releaseScript(t, []string{"PLATFORMS=" + runtime.GOOS + "/" + runtime.GOARCH})
	name := fmt.Sprintf("tessera-%s-%s-%s", want, runtime.GOOS, runtime.GOARCH)
	out, err := exec.Command(filepath.Join(dist, name), "version").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "tessera "+want {
		t.Errorf("%s version: %q %v, want \"tessera %s\"", name, out, err, want)
	}
	if !regexp.MustCompile(`^[0-9a-f]{64}  ` + regexp.QuoteMeta(name) + "\n$").Match(readFile(t, filepath.Join(dist, "SHA256SUMS"))) {
		t.Errorf("SHA256SUMS: %q", readFile(t, filepath.Join(dist, "SHA256SUMS")))
	}
}

// TestReleaseRefusesBadVersion: a version cannot put a path or a space in
// the file names.
func TestReleaseRefusesBadVersion(t *testing.T) {
	for _, v := range []string{"1.0/../x", "1 0"} {
		cmd := exec.Command("bash", "scripts/release.sh", v)
		cmd.Dir, cmd.Env = repoRoot(t), append(os.Environ(), "DIST="+t.TempDir())
		if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "characters") {
			t.Errorf("release.sh %q: %v %s; want a refusal", v, err, out)
		}
	}
}
