package templates_test

import (
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/templates"
)

// The config.yml init writes beside a pipeline is recognised as init's
// own only while nobody has changed it, so --template config replaces it
// and nothing a user wrote.
func TestIsImageConfig(t *testing.T) {
	f, err := templates.ImageConfig("golang:1.23-bookworm")
	if err != nil {
		t.Fatal(err)
	}
	b := string(f.Content)
	for _, tc := range []struct {
		name string
		body string
		want bool
	}{
		{"as written", b, true},
		{"image uncommented", strings.Replace(b, "# image: ", "image: ", 1), false},
		{"a line added", b + "limits:\n  run_timeout: 5m\n", false},
		{"another image", strings.Replace(b, "golang:1.23-bookworm", "node:22-bookworm", 1), true},
		{"the sample", mustSample(t), false},
	} {
		if got := templates.IsImageConfig([]byte(tc.body)); got != tc.want {
			t.Errorf("%s: IsImageConfig = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func mustSample(t *testing.T) string {
	t.Helper()
	b, err := templates.ConfigWithImage("golang:1.23-bookworm")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
