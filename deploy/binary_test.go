package deploy

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var flagLine = regexp.MustCompile(`(?m)^  --?([a-z0-9][a-z0-9-]*)`)

// commandFlags lists the flags `tessera CMD -h` prints.
func commandFlags(t *testing.T, cmd string) map[string]bool {
	t.Helper()
	// -h exits non-zero in some versions; the usage text is what counts.
	out, _ := exec.Command(tesseraBin(t), cmd, "-h").CombinedOutput()
	flags := map[string]bool{}
	for _, m := range flagLine.FindAllSubmatch(out, -1) {
		flags[string(m[1])] = true
	}
	// Every role has at least its listen and log flags; fewer means the
	// usage text was not parsed.
	for _, f := range []string{"address", "log-format"} {
		if !flags[f] {
			t.Fatalf("tessera %s -h lists no --%s; parsed %v from:\n%s", cmd, f, flags, out)
		}
	}
	return flags
}

// flagName is the name of a --flag or --flag=value argument, "" for
// anything else.
func flagName(arg string) string {
	if !strings.HasPrefix(arg, "-") {
		return ""
	}
	name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
	return name
}

// version is the version version.go stamps into a default build.
func version(t *testing.T) string {
	t.Helper()
	m := regexp.MustCompile(`var version = "([^"]+)"`).FindSubmatch(readFile(t, filepath.Join(repoRoot(t), "version.go")))
	if m == nil {
		t.Fatal("version.go: no `var version = \"...\"`")
	}
	return string(m[1])
}
