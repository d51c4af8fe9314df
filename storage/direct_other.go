//go:build !linux

package storage

import (
	"errors"
	"os"
)

// setDirect: O_DIRECT is Linux's; elsewhere staged writes go through the
// page cache.
func setDirect(f *os.File, on bool) error {
	if on {
		return errors.New("direct I/O not supported here")
	}
	return nil
}
