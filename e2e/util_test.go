package e2e

import "io"

func readAllLimited(r io.Reader, n int) ([]byte, error) {
	return io.ReadAll(io.LimitReader(r, int64(n)+1))
}
