// Package deploy holds the container deployment (the Dockerfile at the
// repository root and compose.yml here) and its tests: the compose file is
// checked against the image and setup's file layout everywhere; the image
// is built and started where a container engine works.
package deploy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/kilroy-bot/kilroy-bot/appsetup"
)

type composeFile struct {
	Services map[string]struct {
		Build       *struct{ Context, Dockerfile string }
		SecurityOpt []string          `yaml:"security_opt"`
		Environment map[string]string `yaml:"environment"`
		Volumes     []string          `yaml:"volumes"`
		Profiles    []string          `yaml:"profiles"`
	}
}

// dockerfileEnv is the value of an ENV variable in the Dockerfile.
func dockerfileEnv(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Fields(string(b)) {
		if v, ok := strings.CutPrefix(f, name+"="); ok {
			return v
		}
	}
	t.Fatalf("Dockerfile sets no %s", name)
	return ""
}

// TestComposeMatchesImageAndSetup: the bot service runs with the security
// options bubblewrap needs, keeps the image's data dir on a volume, reads
// the key and secret where setup stores them in that data dir, and
// Postgres only runs with its profile.
func TestComposeMatchesImageAndSetup(t *testing.T) {
	b, err := os.ReadFile("compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("compose.yml: %v", err)
	}
	bot, ok := c.Services["bot"]
	if !ok {
		t.Fatal("compose.yml has no bot service")
	}
	data := dockerfileEnv(t, "KILROY_DATA_DIR")
	files := appsetup.FilesIn(data)
	got := map[string]any{
		"security": bot.SecurityOpt,
		"key":      bot.Environment["KILROY_PRIVATE_KEY_FILE"],
		"secret":   bot.Environment["KILROY_WEBHOOK_SECRET_FILE"],
		// serve reads the app-id file setup stores: compose must not
		// insist on the variable (${VAR:?...} stops compose without it).
		"app id required": strings.Contains(bot.Environment["KILROY_APP_ID"], ":?"),
		"volume":          slices.ContainsFunc(bot.Volumes, func(v string) bool { return strings.HasSuffix(v, ":"+data) }),
		"build":           bot.Build != nil && filepath.Clean(bot.Build.Context) == ".." && bot.Build.Dockerfile == "Dockerfile",
		"postgres":        c.Services["postgres"].Profiles,
	}
	want := map[string]any{
		"security":        []string{"seccomp=unconfined", "apparmor=unconfined", "systempaths=unconfined"},
		"key":             files.PrivateKey(),
		"secret":          files.WebhookSecret(),
		"app id required": false,
		"volume":          true,
		"build":           true,
		"postgres":        []string{"postgres"},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("compose.yml (-got +want):\n%s", diff)
	}
}
