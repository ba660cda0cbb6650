package runner

import (
	"context"
	"encoding/base64"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/internal/gittest"
	"github.com/kilroy-bot/kilroy-bot/secrets"
)

// A node that writes a secret the bot knows (a provider key of its
// environment, a bot secret), plainly or encoded, into a file stops the
// run at that node: the reason names the file and line, never the secret,
// and nothing of the node is committed.
func TestCheckpointRefusesSecrets(t *testing.T) {
	const key = "sk-ant-api03-TESTKEY0123456789abcdef"
	const botSecret = "webhook-s3cret-value"
	for _, tc := range []struct {
		name, write, wantAt string
	}{
		{"provider key", "printf 'a\\nkey=" + key + "\\n' > cfg.txt", "cfg.txt:2: holds the value of $ANTHROPIC_API_KEY"},
		{"base64 of a bot secret", "mkdir -p d && echo " + base64.StdEncoding.EncodeToString([]byte(botSecret)) + " > d/x", "d/x:1: holds an encoded form of a secret of the bot"},
		{"link to a key", "ln -s /tmp/" + key + " k", "k:1: holds the value of $ANTHROPIC_API_KEY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := gittest.NewRepo(t, map[string]string{".kilroy/ci.dot": pipeline(`
  leak [shape=parallelogram, tool_command=` + quote(tc.write) + `]
  start -> leak -> exit`)})
			before := snapshot(t, repo)
			o := localOptions(t, repo)
			o.Env.Host["ANTHROPIC_API_KEY"] = key
			o.Env.SecretValues = []string{botSecret}
			p, res, err := RunLocal(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != attractor.StatusFail || res.FailedNode != "leak" || !strings.Contains(res.FailureReason, tc.wantAt) {
				t.Errorf("run %s at %q: %q; want fail at leak naming %q", res.Status, res.FailedNode, res.FailureReason, tc.wantAt)
			}
			if strings.Contains(res.FailureReason, key) || strings.Contains(res.FailureReason, botSecret) {
				t.Errorf("the reason shows the secret: %q", res.FailureReason)
			}
			want := []commitMsg{checkpointMsg(p.RunID, "start", "success")}
			if diff := cmp.Diff(branchCommits(t, repo, before.Head, p.Branch), want); diff != "" {
				t.Errorf("run branch commits (-got +want):\n%s", diff)
			}
		})
	}
}

// No file the run keeps in a stage directory holds a secret the bot
// knows, in any of its forms: not the logs of a node that printed it, not
// invocation.json (its command), not status.json (its failure reason),
// not what the node wrote there itself. Each keeps the rest of its text.
func TestStageDirsKeepNoSecret(t *testing.T) {
	const key = "sk-ant-api03-PLANTED0123456789abcdef"
	const botSecret = "webhook-s3cret-value"
	b64 := base64.StdEncoding.EncodeToString([]byte(key))
	leak := "echo 'plain " + key + "'; echo 'b64 " + b64 + "' >&2; echo " + botSecret + " > \"$KILROY_STAGE_LOGS_DIR/own.txt\"; exit 3"
	repo := gittest.NewRepo(t, map[string]string{".kilroy/ci.dot": pipeline(`
  leak [shape=parallelogram, tool_command=` + quote(leak) + `]
  start -> leak -> exit`)})
	o := localOptions(t, repo)
	o.Env.Host["ANTHROPIC_API_KEY"] = key
	o.Env.SecretValues = []string{botSecret}
	p, res, err := RunLocal(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != attractor.StatusFail || res.FailedNode != "leak" {
		t.Fatalf("run %s at %q, want the leaking node to fail", res.Status, res.FailedNode)
	}
	stage := filepath.Join(string(p.Dir), "nodes", "leak")
	var forms []string
	for _, s := range []string{key, botSecret} {
		forms = append(forms, secrets.Forms(s)...)
	}
	seen := map[string]bool{}
	err = filepath.WalkDir(stage, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(path)
		seen[d.Name()] = true
		for _, f := range forms {
			if strings.Contains(string(b), f) {
				t.Errorf("%s keeps a form of a secret: %q", d.Name(), b)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"stdout.log", "stderr.log", "invocation.json", "status.json", "own.txt"} {
		if !seen[name] {
			t.Errorf("the stage directory has no %s (files: %v)", name, seen)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(stage, "stdout.log")); string(got) != "plain [REDACTED]\n" {
		t.Errorf("stdout.log = %q, want the rest of it kept", got)
	}
}
