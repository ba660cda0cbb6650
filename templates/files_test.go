package templates_test

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/policy"
	"github.com/kilroy-bot/kilroy-bot/schema"
	"github.com/kilroy-bot/kilroy-bot/templates"
)

func TestFiles(t *testing.T) {
	tests := []struct {
		name    string
		want    []string
		wantErr string
	}{
		{name: "ci-go", want: []string{".kilroy/ci.dot"}},
		{name: "agent-fix", want: []string{".kilroy/agents.yml", ".kilroy/fix.dot"}},
		{name: "config", want: []string{".kilroy/config.yml"}},
		{name: "ci-rust", want: []string{".kilroy/ci.dot"}},
		{name: "ci-ruby", wantErr: `no template "ci-ruby" (templates: agent-fix, ci-generic, ci-go, ci-java, ci-node, ci-python, ci-rust, config)`},
		{name: "ci-py", wantErr: `did you mean "ci-go"?`},
		{name: "agentfix", wantErr: `did you mean "agent-fix"?`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files, err := templates.Files(tt.name)
			if tt.wantErr != "" {
				var ue *templates.UnknownError
				if !errors.As(err, &ue) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Files(%q) error %v, want an UnknownError containing %q", tt.name, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range files {
				got = append(got, f.Path)
				if len(f.Content) == 0 {
					t.Errorf("%s is empty", f.Path)
				}
			}
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("paths (-got +want):\n%s", diff)
			}
		})
	}
}

// The config template tells editors where its schema is, and the URL is
// the schema's own $id.
func TestConfigNamesItsSchema(t *testing.T) {
	files, err := templates.Files(templates.ConfigTemplate)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(files[0].Content), "\n")
	if first != schema.ConfigModeline {
		t.Errorf("first line of config.yml = %q, want %q", first, schema.ConfigModeline)
	}
	if _, err := policy.ParseRepoConfig(files[0].Path, files[0].Content); err != nil {
		t.Errorf("config template: %v", err)
	}
}

func TestDetect(t *testing.T) {
	tests := []struct {
		name  string
		files []string
		want  []string
	}{
		{"go module", []string{"go.mod", "main.go"}, []string{"ci-go"}},
		{"node", []string{"package.json"}, []string{"ci-node"}},
		{"python", []string{"requirements.txt", "setup.py"}, []string{"ci-python"}},
		{"rust", []string{"Cargo.toml", "src/lib.rs"}, []string{"ci-rust"}},
		{"maven", []string{"pom.xml"}, []string{"ci-java"}},
		{"gradle kotlin", []string{"settings.gradle.kts", "build.gradle.kts"}, []string{"ci-java"}},
		{"go and node", []string{"go.mod", "web/package.json", "package.json"}, []string{"ci-go", "ci-node"}},
		{"only nested markers", []string{"tools/go.mod"}, nil},
		{"nothing", []string{"README.md"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := fstest.MapFS{}
			for _, f := range tt.files {
				repo[f] = &fstest.MapFile{Data: []byte("x")}
			}
			if diff := cmp.Diff(templates.Detect(fs.FS(repo)), tt.want); diff != "" {
				t.Errorf("Detect (-got +want):\n%s", diff)
			}
		})
	}
}

// Where Detect finds nothing, Suggest names the closest template.
func TestSuggest(t *testing.T) {
	tests := []struct {
		name   string
		files  []string
		want   string
		reason string
	}{
		{"project in a subdirectory", []string{"README.md", "web/package.json"}, "ci-node", "cd web && "},
		{"two projects in subdirectories: the first", []string{"api/go.mod", "web/package.json"}, "ci-go", "cd api && "},
		{"hidden and vendored directories do not count", []string{".github/package.json", "vendor/go.mod"}, "ci-generic", "change the command"},
		{"makefile", []string{"Makefile", "src/main.c"}, "ci-generic", "there is a Makefile"},
		{"nothing", []string{"README.md"}, "ci-generic", "change the command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := fstest.MapFS{}
			for _, f := range tt.files {
				repo[f] = &fstest.MapFile{Data: []byte("x")}
			}
			got := templates.Suggest(repo)
			if got.Template != tt.want || !strings.Contains(got.Reason, tt.reason) {
				t.Errorf("Suggest = %+v, want template %s with a reason saying %q", got, tt.want, tt.reason)
			}
		})
	}
}
