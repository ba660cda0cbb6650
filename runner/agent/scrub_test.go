package agent

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/secrets"
)

// A CLI that spills its key (on stdout, on stderr, in a shell snapshot
// under its HOME as Codex does, base64-encoded in a session file) leaves
// a stage directory holding no form of it: each such file keeps the rest
// of what it said, with the key replaced.
func TestStageDirKeepsNoSecret(t *testing.T) {
	deps := fakeCLI(t, "claude", `mkdir -p "$HOME/.codex/shell_snapshots" "$HOME/.claude/projects/p"
echo "export CODEX_API_KEY=$ANTHROPIC_API_KEY" > "$HOME/.codex/shell_snapshots/s1.sh"
printf '%s' "$ANTHROPIC_API_KEY" | base64 > "$HOME/.claude/projects/p/session.jsonl"
echo "key is $ANTHROPIC_API_KEY" >&2
echo "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"wrote $ANTHROPIC_API_KEY OUTCOME:SUCCESS\"}"`)
	a := newTestAgent(t, Config{Backends: map[string]Backend{"c": {Kind: KindCLI, CLI: CLIClaude}}}, deps)
	req := testRequest(t, testWorktree(t), "implement")
	o, err := a.Run(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != "success" {
		t.Fatalf("outcome = %+v", o)
	}
	forms := secrets.Forms(testAnthropicKey)
	n := 0
	err = filepath.WalkDir(req.StageDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		n++
		b, err := os.ReadFile(p)
		for _, f := range forms {
			if strings.Contains(string(b), f) {
				t.Errorf("%s keeps a form of the key: %q", p, b)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 4 {
		t.Errorf("only %d files in the stage directory: the fake CLI did not run as written", n)
	}
	if got := readFileT(t, filepath.Join(req.StageDir, "agent.stderr.log")); got != "key is "+redacted+"\n" {
		t.Errorf("agent.stderr.log = %q, want the rest kept", got)
	}
}
