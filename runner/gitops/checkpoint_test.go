package gitops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/google/go-cmp/cmp"
)

func TestCheckpointStagesChangesAndFiltersExcludes(t *testing.T) {
	ctx := context.Background()
	g := newTestGit(t)
	repo := newRepo(t, g, map[string]string{
		".gitignore":                "*.log\n",
		"keep.txt":                  "v1\n",
		"del.txt":                   "bye\n",
		"old name.txt":              "renamed by the node\n",
		"mv-src.txt":                "git mv by the node\n",
		"tracked/node_modules/t.js": "tracked artifact\n",
	})
	gitignore := readFile(t, filepath.Join(repo, ".gitignore"))
	wt, branch, base := newRun(t, g, repo)

	// What a node might do.
	writeFile(t, wt, "keep.txt", "v2\n")
	if err := os.Remove(filepath.Join(wt, "del.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(wt, "old name.txt"), filepath.Join(wt, "new name.txt")); err != nil {
		t.Fatal(err)
	}
	mustGit(t, g, wt, "mv", "mv-src.txt", "mv-dst.txt")
	writeFile(t, wt, "with space.txt", "s\n")
	writeFile(t, wt, "dir/line\nbreak.txt", "n\n")
	writeFile(t, wt, "ünïcødé/файл.txt", "u\n")
	writeFile(t, wt, "glob*[x].txt", "literal pathspec\n")
	writeFile(t, wt, ":(glob)magic.txt", "literal pathspec\n")
	writeFile(t, wt, "node_modules/x.js", "artifact\n")
	writeFile(t, wt, "a/.cargo-target-1/y", "artifact\n")
	writeFile(t, wt, "debug.log", "ignored\n")
	writeFile(t, wt, "tracked/node_modules/t.js", "modified artifact\n")
	writeFile(t, wt, "node_modules/staged.js", "staged by the node\n")
	mustGit(t, g, wt, "add", "--force", "node_modules/staged.js")

	res, err := g.Checkpoint(ctx, wt, spec(branch, "build"))
	if err != nil {
		t.Fatal(err)
	}

	want := []string{
		".gitignore", ":(glob)magic.txt", "dir/line\nbreak.txt", "glob*[x].txt", "keep.txt",
		"mv-dst.txt", "new name.txt", "tracked/node_modules/t.js", "with space.txt", "ünïcødé/файл.txt",
	}
	if diff := cmp.Diff(treeFiles(t, g, wt, res.SHA), want); diff != "" {
		t.Errorf("committed tree (-got +want):\n%s", diff)
	}
	wantExcluded := []string{"a/.cargo-target-1/y", "node_modules/staged.js", "node_modules/x.js", "tracked/node_modules/t.js"}
	if diff := cmp.Diff(res.Excluded, wantExcluded); diff != "" {
		t.Errorf("excluded (-got +want):\n%s", diff)
	}
	// The tracked artifact keeps its committed content.
	if got := mustGit(t, g, wt, "show", res.SHA+":tracked/node_modules/t.js"); got != "tracked artifact" {
		t.Errorf("tracked excluded file committed as %q, want the base content", got)
	}
	if got := mustGit(t, g, wt, "rev-parse", res.SHA+"^"); got != base {
		t.Errorf("checkpoint parent = %s, want base %s", got, base)
	}
	if got := mustGit(t, g, repo, "rev-parse", "refs/heads/"+branch); got != res.SHA {
		t.Errorf("run branch in the repository = %s, want %s", got, res.SHA)
	}
	if got := readFile(t, filepath.Join(wt, ".gitignore")); got != gitignore {
		t.Errorf(".gitignore changed to %q", got)
	}
	if got := mustGit(t, g, wt, "status", "--porcelain", "--", ".gitignore"); got != "" {
		t.Errorf(".gitignore status %q, want clean", got)
	}
}

func TestCheckpointMessageAndIdentity(t *testing.T) {
	ctx := context.Background()
	g := newTestGit(t)
	repo := newRepo(t, g, map[string]string{"a.txt": "a\n"})
	wt, branch, _ := newRun(t, g, repo)

	res, err := g.Checkpoint(ctx, wt, CheckpointSpec{RunID: "01HRUN", NodeID: "verify_go", Status: "fail", Branch: branch})
	if err != nil {
		t.Fatal(err)
	}
	out, err := g.run(ctx, call{dir: wt, args: []string{"log", "-1", "--format=%B", res.SHA}})
	if err != nil {
		t.Fatal(err)
	}
	want := "kilroy(01HRUN): verify_go (fail)\n\nKilroy-Run: 01HRUN\nKilroy-Node: verify_go\nKilroy-Status: fail\n\n"
	if diff := cmp.Diff(string(out), want); diff != "" {
		t.Errorf("message (-got +want):\n%s", diff)
	}
	trailers := mustGit(t, g, wt, "log", "-1", "--format=%(trailers:only,unfold)", res.SHA)
	if want := "Kilroy-Run: 01HRUN\nKilroy-Node: verify_go\nKilroy-Status: fail"; trailers != want {
		t.Errorf("git sees trailers %q, want %q", trailers, want)
	}
	who := mustGit(t, g, wt, "log", "-1", "--format=%an <%ae>|%cn <%ce>", res.SHA)
	if want := BotName + " <" + BotEmail + ">|" + BotName + " <" + BotEmail + ">"; who != want {
		t.Errorf("identity %q, want %q", who, want)
	}
}

func TestCheckpointWithoutChangesIsEmptyCommit(t *testing.T) {
	ctx := context.Background()
	g := newTestGit(t)
	repo := newRepo(t, g, map[string]string{"a.txt": "a\n"})
	wt, branch, base := newRun(t, g, repo)

	first, err := g.Checkpoint(ctx, wt, spec(branch, "noop"))
	if err != nil {
		t.Fatal(err)
	}
	// Only excluded changes: still an empty commit, never `git add --all`
	// without pathspecs.
	writeFile(t, wt, "node_modules/big.js", "x\n")
	second, err := g.Checkpoint(ctx, wt, spec(branch, "npm_install"))
	if err != nil {
		t.Fatal(err)
	}
	for _, sha := range []string{first.SHA, second.SHA} {
		if got, want := mustGit(t, g, wt, "rev-parse", sha+"^{tree}"), mustGit(t, g, wt, "rev-parse", base+"^{tree}"); got != want {
			t.Errorf("commit %s has tree %s, want the base tree %s", sha, got, want)
		}
	}
	if got := mustGit(t, g, wt, "rev-list", "--count", base+".."+second.SHA); got != "2" {
		t.Errorf("%s commits on the run branch, want 2", got)
	}
	if len(second.Staged) != 0 {
		t.Errorf("staged %q, want nothing", second.Staged)
	}
}

func TestCheckpointRejectsBadInput(t *testing.T) {
	ctx := context.Background()
	g := newTestGit(t)
	repo := newRepo(t, g, map[string]string{"a.txt": "a\n"})
	wt, branch, _ := newRun(t, g, repo)

	bad := spec(branch, "n")
	bad.Exclude = []string{"a/[b"}
	if _, err := g.Checkpoint(ctx, wt, bad); !errors.Is(err, doublestar.ErrBadPattern) {
		t.Errorf("bad glob: err = %v, want ErrBadPattern", err)
	}
	forged := spec(branch, "n\nKilroy-Status: success")
	if _, err := g.Checkpoint(ctx, wt, forged); err == nil {
		t.Error("node id with a newline: no error")
	}
}

func TestCheckpointExcludedPredicate(t *testing.T) {
	ctx := context.Background()
	g := newTestGit(t)
	repo := newRepo(t, g, map[string]string{"a.txt": "a\n"})
	wt, branch, _ := newRun(t, g, repo)
	writeFile(t, wt, "out/report.bin", "x")
	writeFile(t, wt, "src/main.go", "package main\n")

	s := spec(branch, "n")
	s.Excluded = func(p string) bool { return filepath.Ext(p) == ".bin" }
	res, err := g.Checkpoint(ctx, wt, s)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(treeFiles(t, g, wt, res.SHA), []string{"a.txt", "src/main.go"}); diff != "" {
		t.Errorf("tree (-got +want):\n%s", diff)
	}
}

func TestCheckpointAfterNodeDeletedGitDir(t *testing.T) {
	ctx := context.Background()
	g := newTestGit(t)
	repo := newRepo(t, g, map[string]string{"a.txt": "a\n"})
	// The worktree sits inside another repository: without a discovery
	// ceiling, git would walk up and commit there.
	outer := filepath.Join(t.TempDir(), "outer")
	mustGit(t, g, filepath.Dir(outer), "init", "--quiet", outer)
	base, _ := g.HeadSHA(ctx, repo)
	branch := RunBranch("ci", "gone")
	wt := filepath.Join(outer, "wt")
	if err := g.AddWorktree(ctx, repo, wt, branch, base); err != nil {
		t.Fatal(err)
	}
	writeFile(t, wt, "first.txt", "1\n")
	first, err := g.Checkpoint(ctx, wt, spec(branch, "first"))
	if err != nil {
		t.Fatal(err)
	}

	if err := os.Remove(filepath.Join(wt, ".git")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, wt, "second.txt", "2\n")
	_, err = g.Checkpoint(ctx, wt, spec(branch, "second"))
	if !errors.Is(err, ErrWorktreeBroken) {
		t.Fatalf("err = %v, want ErrWorktreeBroken", err)
	}
	if got := mustGit(t, g, repo, "rev-parse", "refs/heads/"+branch); got != first.SHA {
		t.Errorf("run branch at %s, want the earlier checkpoint %s", got, first.SHA)
	}
	if _, err := g.HeadSHA(ctx, outer); err == nil {
		t.Error("the enclosing repository got a commit")
	}
	if err := g.RemoveWorktree(ctx, repo, wt); err != nil {
		t.Fatalf("remove broken worktree: %v", err)
	}
	if _, err := os.Stat(wt); !os.IsNotExist(err) {
		t.Errorf("worktree dir still there: %v", err)
	}
}

func TestCheckpointAfterNodeMovedHead(t *testing.T) {
	ctx := context.Background()
	g := newTestGit(t)
	repo := newRepo(t, g, map[string]string{"a.txt": "a\n"})
	wt, branch, _ := newRun(t, g, repo)
	first, err := g.Checkpoint(ctx, wt, spec(branch, "first"))
	if err != nil {
		t.Fatal(err)
	}
	for _, move := range [][]string{{"checkout", "--quiet", "--detach"}, {"checkout", "--quiet", "-b", "elsewhere"}} {
		mustGit(t, g, wt, move...)
		writeFile(t, wt, "b.txt", "b\n")
		if _, err := g.Checkpoint(ctx, wt, spec(branch, "second")); !errors.Is(err, ErrHeadMoved) {
			t.Errorf("after %q: err = %v, want ErrHeadMoved", move, err)
		}
		if got := mustGit(t, g, repo, "rev-parse", "refs/heads/"+branch); got != first.SHA {
			t.Errorf("after %q: run branch at %s, want %s", move, got, first.SHA)
		}
		mustGit(t, g, wt, "checkout", "--quiet", branch)
	}
}

func TestCheckpointTypeChangesAndNestedRepository(t *testing.T) {
	ctx := context.Background()
	g := newTestGit(t)
	repo := newRepo(t, g, map[string]string{"was-file": "f\n", "link-target.txt": "t\n"})
	wt, branch, _ := newRun(t, g, repo)

	// A file replaced by a directory, a new symlink, a nested repository.
	if err := os.Remove(filepath.Join(wt, "was-file")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, wt, "was-file/inner.txt", "i\n")
	if err := os.Symlink("link-target.txt", filepath.Join(wt, "link")); err != nil {
		t.Fatal(err)
	}
	nested := filepath.Join(wt, "vendor", "lib")
	mustGit(t, g, wt, "init", "--quiet", nested)
	writeFile(t, nested, "x.txt", "x\n")
	mustGit(t, g, nested, "add", "x.txt")
	mustGit(t, g, nested, "commit", "--quiet", "-m", "nested")

	res, err := g.Checkpoint(ctx, wt, spec(branch, "n"))
	if err != nil {
		t.Fatal(err)
	}
	got := mustGit(t, g, wt, "ls-tree", "-r", "--format=%(objectmode) %(path)", res.SHA)
	want := "120000 link\n100644 link-target.txt\n160000 vendor/lib\n100644 was-file/inner.txt"
	if got != want {
		t.Errorf("tree:\n%s\nwant:\n%s", got, want)
	}
}

// A checkpoint costs the git processes it needs and no more: status and
// commit (update-index only when something changed); the repository's
// identity is read once per worktree and the new commit's id comes from
// git's files, also when its branch ref is packed.
func TestCheckpointProcesses(t *testing.T) {
	ctx := context.Background()
	wrapper, argvLog, _ := loggingGit(t)
	g := newTestGit(t, func(o *Options) { o.GitPath = wrapper; o.RepoIdentity = true })
	repo := newRepo(t, g, map[string]string{"a.txt": "a\n"})
	wt, branch, _ := newRun(t, g, repo)
	commands := func() []string {
		var out []string
		data, _ := os.ReadFile(argvLog)
		for line := range strings.Lines(string(data)) {
			f := strings.Fields(line)
			for i := 0; i < len(f); i++ {
				if f[i] == "-c" {
					i++
					continue
				}
				if strings.HasPrefix(f[i], "--") {
					continue // a global option such as --no-optional-locks
				}
				out = append(out, f[i])
				break
			}
		}
		os.Remove(argvLog)
		return out
	}
	commands()
	for i, tc := range []struct {
		change func()
		want   []string
	}{
		{func() {}, []string{"status", "config", "commit"}}, // the identity, once
		{func() { writeFile(t, wt, "b.txt", "b\n") }, []string{"status", "update-index", "commit"}},
		{func() { mustGit(t, g, repo, "pack-refs", "--all") }, []string{"status", "commit"}},
	} {
		tc.change()
		commands()
		res, err := g.Checkpoint(ctx, wt, spec(branch, fmt.Sprintf("n%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		got := commands()
		if diff := cmp.Diff(got, tc.want); diff != "" {
			t.Errorf("checkpoint %d: git commands (-got +want):\n%s", i, diff)
		}
		if head := mustGit(t, g, wt, "rev-parse", "HEAD"); res.SHA != head {
			t.Errorf("checkpoint %d: SHA %s, HEAD is %s", i, res.SHA, head)
		}
	}
}
