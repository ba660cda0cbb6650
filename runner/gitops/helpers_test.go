package gitops

import (
	"context"
	"crypto/sha256"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// defaultExcludes mirrors the artifact policy's default checkpoint excludes.
var defaultExcludes = []string{
	"**/.cargo-target*/**", "**/.cargo_target*/**", "**/.wasm-pack/**",
	"**/.tmpbuild/**", "**/node_modules/**", "**/__pycache__/**",
}

func realGitPath(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	return p
}

// newTestGit returns a Git for tests; mod adjusts the options.
func newTestGit(t testing.TB, mod ...func(*Options)) *Git {
	t.Helper()
	opts := Options{
		GitPath:           realGitPath(t),
		PATH:              os.Getenv("PATH"),
		HomeDir:           filepath.Join(t.TempDir(), "home"),
		AllowFileProtocol: true,
	}
	for _, m := range mod {
		m(&opts)
	}
	g, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// mustGit runs git through the hardened path and returns trimmed stdout.
func mustGit(t testing.TB, g *Git, dir string, args ...string) string {
	t.Helper()
	out, err := g.runStr(context.Background(), call{dir: dir, args: args})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func writeFile(t testing.TB, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// newRepo creates a repository with one commit holding files.
func newRepo(t testing.TB, g *Git, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	mustGit(t, g, filepath.Dir(dir), "init", "--quiet", "--initial-branch=main", dir)
	for rel, content := range files {
		writeFile(t, dir, rel, content)
	}
	mustGit(t, g, dir, "add", "--all")
	mustGit(t, g, dir, "commit", "--quiet", "--allow-empty", "-m", "initial")
	return dir
}

// newRun makes a worktree of repo on a fresh run branch at HEAD.
func newRun(t testing.TB, g *Git, repo string) (wt, branch, base string) {
	t.Helper()
	ctx := context.Background()
	base, err := g.HeadSHA(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	branch = RunBranch("ci", "r1")
	wt = filepath.Join(t.TempDir(), "wt")
	if err := g.AddWorktree(ctx, repo, wt, branch, base); err != nil {
		t.Fatal(err)
	}
	return wt, branch, base
}

func spec(branch, node string) CheckpointSpec {
	return CheckpointSpec{RunID: "r1", NodeID: node, Status: "success", Branch: branch, Exclude: defaultExcludes}
}

// treeFiles lists the paths in commit rev.
func treeFiles(t testing.TB, g *Git, dir, rev string) []string {
	t.Helper()
	out, err := g.run(context.Background(), call{dir: dir, args: []string{"ls-tree", "-r", "-z", "--name-only", rev}})
	if err != nil {
		t.Fatal(err)
	}
	files := splitNul(out)
	sort.Strings(files)
	return files
}

// snapshotDir hashes every file under root except the .git directory, so a
// test can prove a working tree was not touched.
func snapshotDir(t testing.TB, root string) map[string]string {
	t.Helper()
	snap := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if rel == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, _ := d.Info()
		snap[rel] = hashOf(b) + " " + info.ModTime().String()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func hashOf(b []byte) string {
	sum := sha256.Sum256(b)
	return string(sum[:])
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if sub != "" && strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
