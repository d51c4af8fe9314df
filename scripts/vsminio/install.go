package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// minioModule is the MinIO release the comparison is made against: the one
// the project's published ratios were measured with, so a rerun compares
// like with like.
const minioModule = "github.com/minio/minio@v0.0.0-20260212201848-7aac2a2c5b7c"

// installMinio returns the path of a MinIO binary built from minioModule,
// building it on first use into a cache directory outside any work tree
// (the user's cache dir, e.g. ~/.cache/tessera-bench), so later runs start
// at once. The build is static (CGO_ENABLED=0), as MinIO's releases are.
func installMinio(ctx context.Context) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("cache dir for the minio build: %w", err)
	}
	dir := filepath.Join(cache, "tessera-bench", "minio-7aac2a2")
	bin := filepath.Join(dir, "minio")
	if fi, err := os.Stat(bin); err == nil && fi.Mode().IsRegular() {
		return bin, nil
	}
	fmt.Fprintf(os.Stderr, "vsminio: building %s into %s (once; a few minutes)\n", minioModule, dir)
	cmd := exec.CommandContext(ctx, "go", "install", minioModule)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOBIN="+dir)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go install %s: %w", minioModule, err)
	}
	return bin, nil
}
