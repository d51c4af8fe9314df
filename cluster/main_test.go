package cluster

import (
	"testing"

	"go.uber.org/goleak"
)

// Close must stop every memberlist goroutine, so no ignore options: a
// straggler here is a leak to fix, not to suppress. goleak retries for a
// while, which covers handlers that exit just after Shutdown returns.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
