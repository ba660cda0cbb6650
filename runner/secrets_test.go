package runner

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/attractor"
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
			repo := newRepo(t, map[string]string{".kilroy/ci.dot": pipeline(`
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
