package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// docsParallel is docs/pipelines.md's parallel example with fanAttrs on the
// parallel node, unitAttrs on unit and unit's command given.
func docsParallel(fanAttrs, unitAttrs, unit string) string {
	return fmt.Sprintf(`digraph ci { start [shape=Mdiamond]; exit [shape=Msquare]
  fan [shape=component%s]
  unit [shape=octagon%s, command=%s]; lint [shape=octagon, command="true"]
  join [shape=tripleoctagon]
  start -> fan; fan -> unit -> join; fan -> lint -> join; join -> exit }
`, fanAttrs, unitAttrs, dotQuote(unit))
}

// TestRunParallelBranchFailure runs the docs example through kilroy-bot run,
// in the sandbox and without it: a branch failing under wait_all (by exit
// status, status file, timeout, or a command that cannot start) is a red
// run (exit 1, the report names the branch and node); allow_partial and
// first_success are partial runs that say what they tolerated.
func TestRunParallelBranchFailure(t *testing.T) {
	const status = `echo '{"status":"fail","failure_reason":"3 tests failed"}' > "$KILROY_STAGE_STATUS_PATH"`
	for _, tc := range []struct {
		name, fanAttrs, unitAttrs, unit string
		wantCode                        int
		wantStdout                      []string
	}{
		{"wait_all, exit status (the docs example)", `, join_policy="wait_all"`, "", "exit 1", 1,
			[]string{"❌ **Failed** at `fan`", "branch unit failed at node unit", "verify command exited with status 1"}},
		{"default policy, status file", "", "", status, 1,
			[]string{"❌ **Failed** at `fan`", "branch unit failed at node unit: 3 tests failed"}},
		{"wait_all, timeout", "", `, timeout="1s"`, "sleep 20", 1,
			[]string{"❌ **Failed** at `fan`", "branch unit failed at node unit", "timed out"}},
		// A NUL byte in the command: the process cannot be started (the
		// sandbox's exec refuses the argument).
		{"wait_all, start failure", "", "", "true\x00", 1,
			[]string{"❌ **Failed** at `fan`", "branch unit failed at node unit", "could not start verify command"}},
		{"allow_partial", `, allow_partial=true`, "", "exit 1", 0,
			[]string{"⚠️ **Partial**", "tolerated by the pipeline", "unit"}},
		{"first_success", `, join_policy="first_success"`, "", status, 0,
			[]string{"⚠️ **Partial**", "tolerated by the pipeline", "unit"}},
	} {
		for _, sandbox := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/sandbox=%v", tc.name, sandbox), func(t *testing.T) {
				repo := newRepo(t, map[string]string{".kilroy/ci.dot": docsParallel(tc.fanAttrs, tc.unitAttrs, tc.unit)})
				runDir := filepath.Join(t.TempDir(), "run")
				args := []string{"run", "--repo", repo, "--run-dir", runDir}
				if !sandbox {
					args = append(args, "--no-sandbox")
				}
				code, stdout, stderr := runCmd(args...)
				if code != tc.wantCode {
					t.Errorf("exit code = %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.wantCode, stdout, stderr)
				}
				for _, w := range tc.wantStdout {
					if !strings.Contains(stdout, w) {
						t.Errorf("report does not say %q:\n%s", w, stdout)
					}
				}
				if strings.Contains(stdout, "✅ **Succeeded**") {
					t.Errorf("report calls the run a success:\n%s", stdout)
				}
				progress, err := os.ReadFile(filepath.Join(runDir, "progress.ndjson"))
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(string(progress), `"status":"success","node":"unit"`) {
					t.Errorf("progress says unit succeeded:\n%s", progress)
				}
			})
		}
	}
}
