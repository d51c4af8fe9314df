package deploy

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// need returns the path of tool. Without it the test skips, saying what is
// missing, except in CI (CI set), where every check must run and a missing
// tool fails.
func need(t *testing.T, tool, install string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s not found on PATH, and CI runs every check (.ci/run installs it: %s)", tool, install)
	}
	t.Skipf("%s not found on PATH (%s); .ci/run installs it", tool, install)
	return ""
}

// repoRoot is the tessera module's directory, above this one.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var built struct {
	once sync.Once
	dir  string
	path string
	err  error
	out  []byte
}

// tesseraBin builds the tessera binary from the parent module once per
// test binary and returns its path.
func tesseraBin(t *testing.T) string {
	t.Helper()
	root := repoRoot(t)
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "tessera-deploy-test-")
		if built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "tessera")
		cmd := exec.Command("go", "build", "-o", built.path, ".")
		cmd.Dir = root
		built.out, built.err = cmd.CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("build tessera: %v\n%s", built.err, built.out)
	}
	return built.path
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// run runs a command in dir and returns its combined output.
func run(t *testing.T, dir, name string, args ...string) ([]byte, error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}
