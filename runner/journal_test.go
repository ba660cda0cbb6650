package runner

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/internal/gittest"
)

// countedPipeline is one -> two, node one counting its runs in counter.
func countedPipeline(counter string) string {
	return pipeline(`
  one [shape=parallelogram, tool_command=` + quote("echo ran >> "+counter+" && echo one > one.txt") + `]
  two [shape=parallelogram, tool_command="test -f one.txt && echo two > two.txt"]
  start -> one -> two -> exit`)
}

// resumeOnce resumes the interrupted run in dir and checks that it
// succeeds without running node one again.
func resumeOnce(t *testing.T, dir RunDir, o LocalOptions, counter string) {
	t.Helper()
	_, res := resume(t, dir, o)
	if res.Status != attractor.StatusSuccess {
		t.Fatalf("resumed run = %s (%s), want success", res.Status, res.FailureReason)
	}
	if got := readFile(t, counter); got != "ran\n" {
		t.Errorf("node one ran %d times, want once", strings.Count(got, "ran"))
	}
	cp, err := ReadCheckpoint(string(dir))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cp.State.Completed, []string{"start", "one", "two", "exit"}); diff != "" {
		t.Errorf("completed nodes after the resume (-got +want):\n%s", diff)
	}
}

// TestResumeTornJournal: a kill in the middle of appending a checkpoint
// leaves half a line; resume continues from the checkpoint before it and
// the resumed run's records follow the whole ones.
func TestResumeTornJournal(t *testing.T) {
	counter := filepath.Join(t.TempDir(), "one.count")
	o := localOptions(t, gittest.NewRepo(t, map[string]string{".kilroy/ci.dot": countedPipeline(counter)}))
	first := interruptedRun(t, o)
	f, err := os.OpenFile(first.Dir.Journal(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"seq":3,"sha":"0123`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	resumeOnce(t, first.Dir, o, counter)
}

// TestResumeVersion1Checkpoint: a run directory of an earlier kilroy-bot,
// whose checkpoint.json held the whole state and no journal, resumes; it
// is converted to the journal on the way.
func TestResumeVersion1Checkpoint(t *testing.T) {
	counter := filepath.Join(t.TempDir(), "one.count")
	o := localOptions(t, gittest.NewRepo(t, map[string]string{".kilroy/ci.dot": countedPipeline(counter)}))
	first := interruptedRun(t, o)
	cp, err := ReadCheckpoint(string(first.Dir))
	if err != nil {
		t.Fatal(err)
	}
	// What version 1 wrote: the state and commit in checkpoint.json.
	v1 := map[string]any{}
	b, _ := json.Marshal(cp)
	if err := json.Unmarshal(b, &v1); err != nil {
		t.Fatal(err)
	}
	v1["version"] = 1
	b, _ = json.Marshal(v1)
	gittest.WriteFile(t, first.Dir.Checkpoint(), string(b))
	if err := os.Remove(first.Dir.Journal()); err != nil {
		t.Fatal(err)
	}
	resumeOnce(t, first.Dir, o, counter)
	if got := readFile(t, first.Dir.Checkpoint()); !strings.Contains(got, `"version": 2`) || strings.Contains(got, `"state"`) {
		t.Errorf("checkpoint.json after resuming a version 1 run:\n%s\nwant version 2 without the state", got)
	}
}

// TestResumeBeforeFirstCheckpoint: a run stopped before its first node
// was checkpointed has nothing to resume, and resume says so.
func TestResumeBeforeFirstCheckpoint(t *testing.T) {
	o := localOptions(t, gittest.NewRepo(t, map[string]string{".kilroy/ci.dot": countedPipeline(filepath.Join(t.TempDir(), "n"))}))
	p, err := PrepareLocal(context.Background(), o)
	if err != nil {
		t.Fatalf("PrepareLocal: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Execute(ctx, o); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	_, err = PrepareResume(context.Background(), string(p.Dir), o)
	if !errors.Is(err, ErrUsage) || !errors.Is(err, ErrNoCheckpoint) || !strings.Contains(err.Error(), "kilroy-bot run") {
		t.Errorf("PrepareResume = %v, want a usage error saying there is no checkpoint yet", err)
	}
}

func TestParseJournal(t *testing.T) {
	rec := func(seq int) string {
		b, _ := json.Marshal(CheckpointRecord{Seq: seq, SHA: "abc"})
		return string(b) + "\n"
	}
	for _, tc := range []struct {
		name    string
		data    string
		seqs    []int
		valid   int
		wantErr string
	}{
		{"empty", "", nil, 0, ""},
		{"whole", rec(1) + rec(2), []int{1, 2}, len(rec(1) + rec(2)), ""},
		{"torn last line", rec(1) + `{"seq":2,"sh`, []int{1}, len(rec(1)), ""},
		{"damaged last line", rec(1) + "}{\n", []int{1}, len(rec(1)), ""},
		{"damaged line before the last", rec(1) + "}{\n" + rec(2), nil, 0, "checkpoints.ndjson:2: not a checkpoint record"},
		{"gap", rec(1) + rec(3), nil, 0, "checkpoints.ndjson:2: checkpoint 3 where 2 belongs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs, valid, err := parseJournal([]byte(tc.data))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var seqs []int
			for _, r := range recs {
				seqs = append(seqs, r.Seq)
			}
			if diff := cmp.Diff([]any{seqs, valid}, []any{tc.seqs, int64(tc.valid)}); diff != "" {
				t.Errorf("records, valid length (-got +want):\n%s", diff)
			}
		})
	}
}
