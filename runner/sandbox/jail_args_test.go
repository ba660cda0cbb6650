package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The sandbox's first process keeps bwrap's command line, which the node
// may read at /proc/1/cmdline: it holds the node's command and nothing of
// the jail's options, which name host paths (the workspace, the run
// directory, the masks of hidden paths), whether the jail was prewarmed
// or started cold.
func TestJailCommandLineHoldsNoHostPath(t *testing.T) {
	hidden := filepath.Join(t.TempDir(), "app-key-file.pem")
	if err := os.WriteFile(hidden, []byte("KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, warm := range []bool{false, true} {
		s := newTestSandbox(t, Config{Hidden: []string{hidden}})
		ws := t.TempDir()
		// The hidden file sits in a directory the jail shows, so it is masked.
		j := &Jail{Sandbox: s, Workspace: ws, ReadOnly: []string{filepath.Dir(hidden)}}
		c := Cmd{Argv: []string{"/bin/sh", "-c", `tr '\0' '\n' < /proc/1/cmdline`}, Dir: ws, Env: jailEnv(), Jail: j}
		if warm {
			Prewarm(c)
		}
		res, out := runOut(t, c)
		if res.ExitCode != 0 || res.prewarmed != warm || !strings.Contains(out, "/proc/1/cmdline") {
			t.Fatalf("prewarmed %v: exit %d, prewarmed %v:\n%s", warm, res.ExitCode, res.prewarmed, out)
		}
		for _, host := range []string{ws, hidden, "--bind", "--ro-bind", "--tmpfs"} {
			if strings.Contains(out, host) {
				t.Errorf("prewarmed %v: /proc/1/cmdline shows %q:\n%s", warm, host, out)
			}
		}
	}
}
