package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// What each built-in CLI is given beyond a tool node's environment: its
// endpoint from base_url, its effort, its telemetry and update switches,
// its own retries of a model call (agents.limits.provider_retries), and
// for Claude Code run as root (unjailed here) IS_SANDBOX=1.
func TestCLIFlavourSettings(t *testing.T) {
	const base = "http://127.0.0.1:9/v1"
	isSandbox := ""
	if os.Geteuid() == 0 {
		isSandbox = "1"
	}
	tests := []struct {
		cli      string
		wantEnv  map[string]string
		wantArgs []string // consecutive arguments, joined by newlines
		wantFile []string // in HOME/.gemini/settings.json
	}{
		{CLIClaude, map[string]string{"ANTHROPIC_BASE_URL": base, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "IS_SANDBOX": isSandbox,
			"CLAUDE_CODE_MAX_RETRIES": "2", "CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS": "1"},
			[]string{"--effort\nhigh", "--model\nm1", "--max-turns\n7"}, nil},
		{CLIGemini, map[string]string{"GOOGLE_GEMINI_BASE_URL": base, "GEMINI_TELEMETRY_ENABLED": "false", "IS_SANDBOX": ""},
			[]string{"--model\nm1"}, []string{`"usageStatisticsEnabled": false`, `"selectedType": "gemini-api-key"`, `"maxAttempts": 3`, `"maxSessionTurns": 7`}},
		{CLICodex, map[string]string{"CODEX_API_KEY": testOpenAIKey, "ANTHROPIC_BASE_URL": "", "IS_SANDBOX": ""},
			[]string{"-c\ncheck_for_update_on_startup=false", "-c\nfeatures.plugins=false", `-c` + "\n" + `model_providers.kilroy.base_url="` + base + `"`,
				`-c` + "\n" + `model_providers.kilroy.env_key="CODEX_API_KEY"`, `-c` + "\n" + `model_provider="kilroy"`, "model_reasoning_effort=high",
				"-c\nmodel_providers.kilroy.request_max_retries=2", "-c\nmodel_providers.kilroy.stream_max_retries=2"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.cli, func(t *testing.T) {
			deps := fakeCLI(t, tt.cli, `printf '%s\n' "$@" > "$KILROY_STAGE_LOGS_DIR/argv.txt"
env > .fake-env.txt # not in the stage directory, which is scrubbed of keys
cat "$HOME/.gemini/settings.json" > "$KILROY_STAGE_LOGS_DIR/home.txt" 2>/dev/null
echo 'OUTCOME:SUCCESS'`)
			a := newTestAgent(t, Config{Backends: map[string]Backend{"b": {Kind: KindCLI, CLI: tt.cli, BaseURL: base}},
				Limits: Limits{ProviderRetries: 2, MaxTurns: 7}}, deps)
			req := testRequest(t, testWorktree(t), "implement")
			req.Node.LLMModel, req.Node.ReasoningEffort = "m1", "high"
			if _, err := a.Run(t.Context(), req); err != nil {
				t.Fatal(err)
			}
			env := parseEnv(readFileT(t, filepath.Join(req.Workspace, ".fake-env.txt")))
			got := map[string]string{}
			for k := range tt.wantEnv {
				got[k] = env[k]
			}
			if diff := cmp.Diff(got, tt.wantEnv); diff != "" {
				t.Errorf("environment (-got +want):\n%s", diff)
			}
			argv := readFileT(t, filepath.Join(req.StageDir, "argv.txt"))
			for _, w := range tt.wantArgs {
				if !strings.Contains(argv, w+"\n") {
					t.Errorf("argv lacks %q:\n%s", w, argv)
				}
			}
			home, _ := os.ReadFile(filepath.Join(req.StageDir, "home.txt"))
			for _, w := range tt.wantFile {
				if !strings.Contains(string(home), w) {
					t.Errorf("HOME/.gemini/settings.json = %q, want it to contain %q", home, w)
				}
			}
		})
	}
}
