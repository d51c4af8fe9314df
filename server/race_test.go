//go:build race

package server

// raceEnabled reports a build with the race detector, whose slowdown
// makes timing tests meaningless.
const raceEnabled = true
