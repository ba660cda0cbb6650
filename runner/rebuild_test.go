package runner

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/internal/gittest"
	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
)

// storedOf is what a StateStore holds of the run in dir.
func storedOf(t *testing.T, dir RunDir) Stored {
	t.Helper()
	h, err := readHeader(string(dir))
	if err != nil {
		t.Fatal(err)
	}
	header, err := encodeHeader(*h)
	if err != nil {
		t.Fatal(err)
	}
	st := Stored{Header: header, Graph: []byte(readFile(t, dir.Graph()))}
	for line := range bytes.Lines([]byte(readFile(t, dir.Journal()))) {
		st.Records = append(st.Records, bytes.TrimSuffix(line, []byte("\n")))
	}
	return st
}

// TestRebuildRunDir: another process's run directory is rebuilt from its
// stored state and the run branch on the remote, elsewhere, and resumes
// from the last checkpoint the remote has: the last one, or the one
// before when the last push did not arrive. The policy snapshot's paths
// move into the new run directory.
func TestRebuildRunDir(t *testing.T) {
	for _, tc := range []struct {
		name     string
		pushed   int // checkpoints on the remote: 2 = start and one
		runsOne  int // times node one runs in all
		wantSeq  int
		wantNone bool
	}{
		{name: "last checkpoint pushed", pushed: 2, runsOne: 1, wantSeq: 2},
		{name: "last push lost", pushed: 1, runsOne: 2, wantSeq: 1},
		{name: "nothing pushed", pushed: 0, wantNone: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			counter := filepath.Join(t.TempDir(), "one.count")
			repo := gittest.NewRepo(t, map[string]string{".kilroy/ci.dot": countedPipeline(counter), "go.mod": "module x\n",
				".kilroy/config.yml": "version: 1\nartifact_policy:\n  env:\n    managed_roots:\n      go: go-root\n"})
			o := localOptions(t, repo)
			first := interruptedRun(t, o)
			remote := filepath.Join(t.TempDir(), "remote.git")
			gittest.Git(t, repo, "clone", "--quiet", "--bare", repo, remote)
			gittest.Git(t, remote, "branch", "-D", first.Branch) // cloned along; pushed below
			if tc.pushed > 0 {
				sha := gittest.Git(t, repo, "rev-parse", first.Branch+"~"+string(rune('0'+2-tc.pushed)))
				gittest.Git(t, repo, "push", "--quiet", remote, sha+":refs/heads/"+first.Branch)
			}
			gittest.Git(t, repo, "branch", "-D", first.Branch) // the remote's is the one to use
			mirror := filepath.Join(t.TempDir(), "mirror.git")
			gittest.Git(t, repo, "clone", "--quiet", "--bare", remote, mirror)

			dir := RunDir(filepath.Join(t.TempDir(), "elsewhere", "run"))
			g, err := gitops.New(gitops.Options{GitPath: gittest.Path(t), PATH: os.Getenv("PATH"), HomeDir: dir.GitHome(),
				AllowFileProtocol: true})
			if err != nil {
				t.Fatal(err)
			}
			cp, err := RebuildRunDir(context.Background(), g, dir, mirror, "file://"+remote, storedOf(t, first.Dir))
			if tc.wantNone {
				if !errors.Is(err, ErrNothingToResume) {
					t.Fatalf("RebuildRunDir = %v, want ErrNothingToResume", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("RebuildRunDir: %v", err)
			}
			if cp.Seq != tc.wantSeq {
				t.Errorf("rebuilt at checkpoint %d, want %d", cp.Seq, tc.wantSeq)
			}
			agreesWithJournal(t, dir, "of the rebuilt run directory")
			if got, want := cp.Policy.ManagedRoots["go"], filepath.Join(string(dir), "policy-managed-roots", "go-root"); got != want {
				t.Errorf("managed root of go = %s, want %s in the new run directory", got, want)
			}
			for k, v := range cp.Policy.Env {
				if strings.Contains(v, string(first.Dir)) {
					t.Errorf("policy env %s=%s still points into the old run directory", k, v)
				}
			}
			o.RepoDir = mirror
			resumeOnceN(t, dir, o, counter, tc.runsOne)
		})
	}
}

// resumeOnceN resumes the run in dir to success; node one has then run
// runs times in all.
func resumeOnceN(t *testing.T, dir RunDir, o LocalOptions, counter string, runs int) {
	t.Helper()
	_, res := resume(t, dir, o)
	if res.Status != "success" {
		t.Fatalf("resumed run = %s (%s), want success", res.Status, res.FailureReason)
	}
	if got := strings.Count(readFile(t, counter), "ran"); got != runs {
		t.Errorf("node one ran %d times, want %d", got, runs)
	}
	cp, err := ReadCheckpoint(string(dir))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cp.State.Completed, []string{"start", "one", "two", "exit"}); diff != "" {
		t.Errorf("completed nodes after the resume (-got +want):\n%s", diff)
	}
}
