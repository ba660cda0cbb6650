package server

import (
	"os"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/runner"
)

// The tests' own git commands go through internal/gittest.

// testEnv is a node environment with a private HOME and the test's PATH.
func testEnv(t testing.TB) runner.EnvInputs {
	t.Helper()
	return runner.EnvInputs{Host: map[string]string{"PATH": os.Getenv("PATH"), "HOME": t.TempDir()}}
}
