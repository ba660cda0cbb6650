package policy

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// repo builds an in-memory repository holding the given files.
func repo(files ...string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for _, f := range files {
		fsys[f] = &fstest.MapFile{Data: []byte("x")}
	}
	return fsys
}

func TestResolveProfiles(t *testing.T) {
	deep6 := strings.Repeat("d/", 6)
	deep7 := strings.Repeat("d/", 7)
	tests := []struct {
		name        string
		policy      ProfilesPolicy
		repo        fstest.MapFS
		wantProfile []string
		wantMarkers map[string]string
	}{
		{
			name:        "root markers, default mode is auto",
			repo:        repo("go.mod", "Cargo.toml", "package.json", "README.md"),
			wantProfile: []string{"go", "node", "rust"},
			wantMarkers: map[string]string{"go": "go.mod", "rust": "Cargo.toml", "node": "package.json"},
		},
		{
			name:        "every marker name",
			policy:      ProfilesPolicy{Mode: ModeAuto},
			repo:        repo("a/rust-toolchain", "b/go.work", "c/yarn.lock", "d/setup.py", "e/settings.gradle"),
			wantProfile: []string{"go", "java", "node", "python", "rust"},
			wantMarkers: map[string]string{"rust": "a/rust-toolchain", "go": "b/go.work", "node": "c/yarn.lock",
				"python": "d/setup.py", "java": "e/settings.gradle"},
		},
		{
			name:        "nested markers",
			repo:        repo("services/api/go.mod", "web/app/pnpm-lock.yaml", "tools/py/pyproject.toml", "jvm/pom.xml", "crates/x/rust-toolchain.toml"),
			wantProfile: []string{"go", "java", "node", "python", "rust"},
			wantMarkers: map[string]string{"go": "services/api/go.mod", "node": "web/app/pnpm-lock.yaml",
				"python": "tools/py/pyproject.toml", "java": "jvm/pom.xml", "rust": "crates/x/rust-toolchain.toml"},
		},
		{
			name:        "six levels deep is found",
			repo:        repo(deep6 + "requirements.txt"),
			wantProfile: []string{"python"},
			wantMarkers: map[string]string{"python": deep6 + "requirements.txt"},
		},
		{
			name:        "seven levels deep is not",
			repo:        repo(deep7 + "requirements.txt"),
			wantProfile: []string{"generic"},
		},
		{
			name:        "lexical order picks the first marker of a profile",
			repo:        repo("zeta/go.mod", "alpha/beta/go.work", "alpha/go.mod", "mid/package-lock.json", "b/package.json"),
			wantProfile: []string{"go", "node"},
			wantMarkers: map[string]string{"go": "alpha/beta/go.work", "node": "b/package.json"},
		},
		{
			name:        "root before subdirectories",
			repo:        repo("a/go.work", "go.mod"),
			wantProfile: []string{"go"},
			wantMarkers: map[string]string{"go": "go.mod"},
		},
		{
			name: "vendored and tool directories are skipped",
			repo: repo(".git/go.mod", "node_modules/x/package.json", "vendor/m/go.mod", ".venv/lib/setup.py",
				"venv/pyproject.toml", "bower_components/y/package.json", ".tox/requirements.txt", "__pycache__/setup.py", ".hg/pom.xml", ".svn/Cargo.toml"),
			wantProfile: []string{"generic"},
		},
		{
			name:        "a directory named like a marker is not a marker",
			repo:        fstest.MapFS{"go.mod/readme": {Data: []byte("x")}},
			wantProfile: []string{"generic"},
		},
		{
			name:        "no markers is generic",
			repo:        repo("README.md", "src/main.c"),
			wantProfile: []string{"generic"},
		},
		{
			name:        "explicit ignores markers and sorts",
			policy:      ProfilesPolicy{Mode: ModeExplicit, Explicit: []string{"rust", "go"}},
			repo:        repo("package.json"),
			wantProfile: []string{"go", "rust"},
		},
		{
			name:   "disabled has no profiles",
			policy: ProfilesPolicy{Mode: ModeDisabled},
			repo:   repo("go.mod"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Resolve(ResolveInput{Policy: ArtifactPolicy{Profiles: tt.policy}, Repo: tt.repo, RunDir: "/runs/r1"})
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if diff := cmp.Diff(r.Profiles, tt.wantProfile); diff != "" {
				t.Errorf("profiles (-got +want):\n%s", diff)
			}
			if diff := cmp.Diff(r.Markers, tt.wantMarkers); diff != "" {
				t.Errorf("markers (-got +want):\n%s", diff)
			}
		})
	}
}

func TestResolveDisabledKeepsRules(t *testing.T) {
	p := ArtifactPolicy{
		Profiles: ProfilesPolicy{Mode: ModeDisabled},
		Env:      EnvPolicy{Overrides: map[string]map[string]string{"go": {"GOPATH": "gp"}}},
		Verify:   VerifyPolicy{DenyGlobs: []string{"**/dist/**"}},
	}
	r, err := Resolve(ResolveInput{Policy: p, Repo: repo("go.mod"), RunDir: "/runs/r1", HostEnv: map[string]string{"HOME": "/home/u"}})
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	want := &Resolved{
		Version:    ResolvedVersion,
		Mode:       ModeDisabled,
		Checkpoint: CheckpointPolicy{ExcludeGlobs: DefaultExcludeGlobs()},
		Verify:     VerifyPolicy{DenyGlobs: []string{"**/dist/**"}},
	}
	if diff := cmp.Diff(r, want); diff != "" {
		t.Errorf("resolved (-got +want):\n%s", diff)
	}
}

func TestResolveAutoNeedsRepo(t *testing.T) {
	if _, err := Resolve(ResolveInput{RunDir: "/runs/r1"}); err == nil {
		t.Fatal("Resolve in auto mode without a repository: got no error")
	}
	if _, err := Resolve(ResolveInput{Policy: ArtifactPolicy{Profiles: ProfilesPolicy{Mode: ModeDisabled}}, RunDir: "/runs/r1"}); err != nil {
		t.Fatalf("Resolve in disabled mode without a repository: %v", err)
	}
}

func TestResolveRunDirMustBeAbsolute(t *testing.T) {
	_, err := Resolve(ResolveInput{Repo: repo(), RunDir: "runs/r1"})
	if err == nil || !strings.Contains(err.Error(), "not absolute") {
		t.Fatalf("Resolve with a relative run dir: got %v, want a 'not absolute' error", err)
	}
}
